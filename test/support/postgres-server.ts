import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresBinaries } from "../../functions/app/db/postgres-binaries.ts";
import { unprivileged } from "../../functions/app/db/unprivileged.ts";

/** PostgreSQL's client programs (pg_dump), from Debian's postgresql-client-15: the npm package ships the server's only. */
export const PG_CLIENT_BIN = process.env.PG_CLIENT_BIN ?? "/usr/lib/postgresql/15/bin";

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface PostgresServer {
  /** Superuser URL of the `postgres` database. */
  url: string;
  port: number;
  /** Crashes the cluster: `pg_ctl stop -m immediate` (SIGQUIT to the postmaster), waiting until it is gone. */
  crash(): Promise<void>;
  /** Starts the cluster again on the same port and data directory, once it is down; resolves when it accepts connections. */
  start(): Promise<void>;
  /** Freezes the postmaster and every backend (SIGSTOP): connections open, nothing answers. */
  pause(): void;
  /** Lets a paused cluster run again (SIGCONT). */
  resume(): void;
  /** Everything the server logged so far (its stderr). */
  logs(): string;
  stop(): Promise<void>;
}

/**
 * Starts a throwaway PostgreSQL 15 cluster on a free loopback port, tuned for tests (no fsync), from
 * the binaries `npm start` runs (db/postgres-binaries.ts). Works as root (in a user namespace, as
 * `npm start` runs it: db/unprivileged.ts) and as an ordinary user. Its faults (crash and
 * restart, pause and resume) are the real thing, for tests of what the app does meanwhile.
 * `settings` are further server settings, e.g. `{ log_statement: "all" }`.
 */
export async function startPostgresServer(settings: Record<string, string> = {}): Promise<PostgresServer> {
  const dir = mkdtempSync(join(tmpdir(), "cadence-pg-"));
  const data = join(dir, "data");
  const port = await freePort();
  const binaries = await postgresBinaries();
  execFileSync(...unprivileged(binaries.initdb, [
    "-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync",
  ]), { stdio: "pipe" });
  const args = [
    "-D", data, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1",
    "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
    "-c", "max_connections=300", "-c", "shared_buffers=128MB",
    ...Object.entries(settings).flatMap(([name, value]) => ["-c", `${name}=${value}`]),
  ];
  let child: ChildProcess;
  let stderr = "";
  async function start() {
    // `unshare` execs the server: the child is the postmaster, whose signals the faults below send.
    // Its log in English, whatever the machine's locale: the start is known by its line.
    child = spawn(...unprivileged(binaries.postgres, args), { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, LC_MESSAGES: "C" } });
    child.stderr?.on("data", (chunk) => (stderr += chunk));
    await waitUntilReady(port, child, () => stderr);
  }
  const running = () => child.exitCode === null && child.signalCode === null;
  /** Signals the postmaster (the child itself) and waits for it to exit. */
  async function signalAndWait(signal: NodeJS.Signals) {
    if (!running()) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill(signal);
    await exited;
  }
  /** The postmaster and its children (backends, checkpointer, ...). */
  const cluster = () => {
    const pid = child.pid!;
    // `ps` exits 1 when it lists nothing: a postmaster exiting as it is asked has no children left.
    const listed = spawnSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" }).stdout;
    const children = listed.split("\n").map((line) => Number(line.trim())).filter((child) => child > 0);
    return [pid, ...children];
  };
  /** Signals every process of the cluster; one that exited since `ps` listed it (a backend whose client left) is skipped. */
  const signalCluster = (signal: NodeJS.Signals) => {
    for (const pid of cluster()) {
      try {
        process.kill(pid, signal);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
      }
    }
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    crash: () => signalAndWait("SIGQUIT"),
    start,
    pause: () => signalCluster("SIGSTOP"),
    resume: () => signalCluster("SIGCONT"),
    logs: () => stderr,
    async stop() {
      // A paused cluster would not see the shutdown; SIGINT is postgres's fast shutdown.
      if (running()) signalCluster("SIGCONT");
      await signalAndWait("SIGINT");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A start not ready by then has hung: a hang guard, where 200 tries (about 20 s on a quiet machine) was a speed budget. */
const READY_GUARD_MS = 120_000;

/** Whether `port` of 127.0.0.1 takes a TCP connection now. */
async function accepting(port: number): Promise<boolean> {
  return await new Promise<boolean>((resolve) => {
    const socket = createConnection({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function waitUntilReady(port: number, child: ChildProcess, stderr: () => string) {
  const from = stderr().length;
  const said = () => stderr().slice(from).includes("database system is ready to accept connections");
  for (const giveUpAt = performance.now() + READY_GUARD_MS; performance.now() < giveUpAt;) {
    if (child.exitCode !== null) throw new Error(`postgres exited early:\n${stderr()}`);
    if (said() && (await accepting(port))) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`postgres did not become ready:\n${stderr()}`);
}
