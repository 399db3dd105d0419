import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The Debian binaries of the same major version Supabase runs. */
const PG_BIN = process.env.PG_BIN ?? "/usr/lib/postgresql/15/bin";
const isRoot = process.getuid?.() === 0;

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

/** initdb and postgres refuse to run as root: as root, run them as the `postgres` OS user. */
function asPostgresUser(command: string, args: string[]): [string, string[]] {
  if (!isRoot) return [command, args];
  const line = [command, ...args].map((part) => `'${part.replaceAll("'", "'\\''")}'`).join(" ");
  return ["su", ["postgres", "-s", "/bin/sh", "-c", `exec ${line}`]];
}

export interface PostgresServer {
  /** Superuser URL of the `postgres` database. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Starts a throwaway PostgreSQL 15 cluster on a free loopback port, tuned for tests (no fsync).
 * Works as root (runs as the `postgres` user) and as an ordinary user.
 */
export async function startPostgresServer(): Promise<PostgresServer> {
  const dir = mkdtempSync(join(tmpdir(), "cadence-pg-"));
  chmodSync(dir, 0o777);
  const data = join(dir, "data");
  const port = await freePort();
  const [initdb, initArgs] = asPostgresUser(join(PG_BIN, "initdb"), [
    "-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync",
  ]);
  execFileSync(initdb, initArgs, { stdio: "pipe" });
  const [postgres, args] = asPostgresUser(join(PG_BIN, "postgres"), [
    "-D", data, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1",
    "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
    "-c", "max_connections=300", "-c", "shared_buffers=128MB",
  ]);
  const child: ChildProcess = spawn(postgres, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk) => (stderr += chunk));
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitUntilReady(port, child, () => stderr);
  return {
    url,
    port,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        // SIGINT is postgres's fast shutdown, sent to the postmaster itself (not to `su` in between).
        const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
        process.kill(pid, "SIGINT");
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitUntilReady(port: number, child: ChildProcess, stderr: () => string) {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`postgres exited early:\n${stderr()}`);
    try {
      execFileSync(join(PG_BIN, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres"], { stdio: "pipe" });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`postgres did not become ready:\n${stderr()}`);
}
