import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { unprivileged } from "../../functions/app/db/unprivileged.ts";
import { freePort } from "./postgres-server.ts";

export interface PgBouncer {
  port: number;
  /** `url` (a URL of the Postgres behind it) with its host and port replaced by the pooler's. */
  through(url: string): string;
  /** Stops the pooler at once (SIGTERM: immediate shutdown), dropping every client connection. */
  kill(): Promise<void>;
  /** Starts it again on the same port; resolves when it accepts connections. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The pgbouncer binary: the first on PATH, else where Debian's package puts it. */
function pgbouncerBinary(): string | undefined {
  return [...(process.env.PATH ?? "").split(delimiter), "/usr/sbin"].map((dir) => join(dir, "pgbouncer")).find(existsSync);
}

/** Whether Debian's pgbouncer is installed (`.ci/run` installs it). */
export function pgbouncerAvailable(): boolean {
  return pgbouncerBinary() !== undefined;
}

/**
 * PgBouncer in transaction mode in front of the Postgres on `postgresPort`, every database
 * passed through: the stand-in for Supabase's transaction pooler (no prepared statements across
 * transactions). It retries a server it could not reach after 250 ms, not its default 15 s.
 *
 * @example
 * const pooler = await startPgBouncer(server.port);
 * const db = openPostgres(pooler.through(url), { transactionPooler: true });
 */
export async function startPgBouncer(postgresPort: number): Promise<PgBouncer> {
  const dir = mkdtempSync(join(tmpdir(), "cadence-pgbouncer-"));
  const port = await freePort();
  const ini = join(dir, "pgbouncer.ini");
  writeFileSync(join(dir, "userlist.txt"), '"postgres" ""\n');
  writeFileSync(
    ini,
    [
      "[databases]",
      `* = host=127.0.0.1 port=${postgresPort}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(dir, "userlist.txt")}`,
      "pool_mode = transaction",
      "stats_users = postgres",
      "max_client_conn = 2000",
      "default_pool_size = 40",
      "server_login_retry = 0.25",
      `logfile = ${join(dir, "pgbouncer.log")}`,
      `pidfile = ${join(dir, "pgbouncer.pid")}`,
      "",
    ].join("\n"),
  );
  const binary = pgbouncerBinary();
  if (!binary) throw new Error("pgbouncer not found (apt-get install pgbouncer)");
  // PgBouncer refuses to run as root: as root, in a user namespace as PostgreSQL is (the `postgres`
  // user it once ran as could not enter a checkout in a 0700 directory, the spawn's working one).
  const command = unprivileged(binary, [ini]);
  let child: ChildProcess;
  let output = "";
  async function start() {
    child = spawn(command[0], command[1], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout?.on("data", (chunk) => (output += chunk));
    child.stderr?.on("data", (chunk) => (output += chunk));
    await waitForPort(port, () => child.exitCode !== null ? `pgbouncer exited:\n${output}` : undefined);
  }
  async function signalAndWait(signal: NodeJS.Signals) {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill(signal);
    await exited;
  }
  await start();
  return {
    port,
    through(url) {
      const parsed = new URL(url);
      parsed.hostname = "127.0.0.1";
      parsed.port = String(port);
      return parsed.toString();
    },
    kill: () => signalAndWait("SIGTERM"),
    start,
    async stop() {
      await signalAndWait("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A start not listening by then has hung: a hang guard, where 200 tries (about 10 s) was a speed budget. */
const LISTEN_GUARD_MS = 120_000;

/** Resolves once `port` accepts TCP connections; `failed()` names a reason to stop waiting. */
async function waitForPort(port: number, failed: () => string | undefined) {
  for (const giveUpAt = performance.now() + LISTEN_GUARD_MS; performance.now() < giveUpAt;) {
    const reason = failed();
    if (reason) throw new Error(reason);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: "127.0.0.1" });
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nothing listens on ${port}`);
}
