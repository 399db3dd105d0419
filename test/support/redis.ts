import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { unfakedEnv } from "./child-env.ts";
import { freePort } from "./postgres-server.ts";

export interface RedisServer {
  /** e.g. redis://127.0.0.1:41237 */
  url: string;
  /** Freezes the server (SIGSTOP): connections stay open and nothing is answered, as a stalled host. */
  pause(): void;
  /** Lets a paused server run again (SIGCONT). */
  resume(): void;
  stop(): Promise<void>;
}

/** The redis-server binary: $REDIS_SERVER, else the first on PATH (Debian's apt package puts it in /usr/bin). */
function redisServerBinary(): string | undefined {
  const candidates = process.env.REDIS_SERVER
    ? [process.env.REDIS_SERVER]
    : [...(process.env.PATH ?? "").split(delimiter), "/usr/bin"].map((dir) => join(dir, "redis-server"));
  return candidates.find((path) => existsSync(path));
}

/**
 * Whether suites that need a real Redis can run. Outside CI a missing redis-server skips them
 * with a visible message; under CI (`CI=true`) it is an error, so those tests can never be
 * skipped silently where they are meant to run.
 */
export function redisServerAvailable(): boolean {
  if (redisServerBinary()) return true;
  const message = "redis-server not found (install it with `apt-get install redis-server`, or set REDIS_SERVER)";
  if (process.env.CI === "true") throw new Error(`${message}: CI must run the Redis rate-limit tests`);
  console.warn(`SKIPPING the Redis and Upstash rate-limit tests: ${message}`);
  return false;
}

/**
 * A throwaway `redis-server` on a free loopback port, with its working directory in a temp dir
 * and persistence off.
 *
 * @example
 * const redis = await startRedis(); // or startRedis({ port, args: ["--requirepass", "secret"] })
 * const store = await createLimiter({ REDIS_URL: redis.url }, log, Date.now);
 */
export async function startRedis(options: { port?: number; args?: string[] } = {}): Promise<RedisServer> {
  const binary = redisServerBinary();
  if (!binary) throw new Error("redis-server not found");
  const dir = mkdtempSync(join(tmpdir(), "cadence-redis-"));
  const port = options.port ?? (await freePort());
  const child = spawn(
    binary,
    ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no", ...(options.args ?? [])],
    { stdio: ["ignore", "pipe", "pipe"], env: unfakedEnv() },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let output = "";
  await new Promise<void>((resolve, reject) => {
    // A hang guard, which kills what it gave up on so that nothing outlives the run.
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`redis-server did not start within 60 s:\n${output}`));
    }, 60_000);
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk;
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}:\n${output}`));
    });
  });
  let paused = false;
  return {
    url: `redis://127.0.0.1:${port}`,
    pause() {
      paused = child.kill("SIGSTOP");
    },
    resume() {
      child.kill("SIGCONT");
      paused = false;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        // Only when paused: under Deno's node:child_process a second kill() of a child is lost.
        if (paused) child.kill("SIGCONT");
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
