import { spawn } from "node:child_process";
import { chmodSync, copyFileSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../functions/app/config.ts";
import { ConfigError } from "../../functions/app/config-error.ts";
import { refuseUnshared } from "../../functions/app/shared-by-workers.ts";
import { childEnv } from "../support/child-env.ts";
import { freshDatabase, scopedDatabase, type TestDatabase } from "../support/database.ts";
import { type RedisServer, redisServerAvailable, startRedis } from "../support/redis.ts";
import { freePortRange, startServer } from "../support/server.ts";

const root = new URL("../../", import.meta.url).pathname;
/** The Deno binary npm installed (node_modules/.bin/deno links to it). */
const realDeno = join(root, "node_modules/deno/deno");

const refusal = (env: Record<string, string>, workers: number) => {
  try {
    refuseUnshared(parseConfig(env), workers);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
};

describe("workers of npm run start:workers share what they must", () => {
  it("accepts one worker with anything, and several with limits in Redis or Upstash and a Postgres", () => {
    expect(refusal({}, 1)).toBeUndefined();
    expect(refusal({ DATABASE_URL: "postgres://db/x", REDIS_URL: "redis://r:6379" }, 4)).toBeUndefined();
    expect(refusal({ SUPABASE_DB_URL: "postgres://db/x", UPSTASH_REDIS_REST_URL: "https://u.example", UPSTASH_REDIS_REST_TOKEN: "t" }, 16)).toBeUndefined();
  });

  it("refuses several workers with the in-memory limiter, naming the variables", () => {
    expect(refusal({ DATABASE_URL: "postgres://db/x" }, 2)).toBe(
      "invalid configuration\n  DENO_JOBS: 2 workers need their rate limits in Redis: set REDIS_URL or UPSTASH_REDIS_REST_URL, or DENO_JOBS=1",
    );
  });

  it("refuses several workers on the local default database, naming the variables", () => {
    expect(refusal({ REDIS_URL: "redis://r:6379" }, 3)).toBe(
      "invalid configuration\n  DENO_JOBS: 3 workers need a database they share (the local default belongs to one process): set DATABASE_URL, or DENO_JOBS=1",
    );
  });

  it("reads DENO_JOBS as a whole number of workers", () => {
    expect(parseConfig({ DENO_JOBS: "4" }).DENO_JOBS).toBe(4);
    expect(() => parseConfig({ DENO_JOBS: "0" })).toThrow("DENO_JOBS: must be a whole number of workers, at least 1");
  });
});

describe("npm run start:workers names at start a client-IP header believed from every address", () => {
  const database = scopedDatabase();

  /** The start-up lines (JSON) of the production start with these variables, one worker. */
  async function startLines(env: Record<string, string>) {
    const server = await startServer({ ...database.serverEnv, DENO_JOBS: "1", ...env }, undefined, { startScript: true, script: "start:workers" });
    await server.stop();
    return server.logs().split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  it("logs one warning naming TRUSTED_PROXIES when it holds 0.0.0.0/0 or ::/0, and none for the proxies' own addresses", async () => {
    const warned = await startLines({ CLIENT_IP_HEADER: "x-real-ip", TRUSTED_PROXIES: "10.0.0.5,0.0.0.0/0" });
    expect(warned.filter((line) => line.event === "client_ip_header_from_every_address")).toEqual([
      expect.objectContaining({ level: "warn", variable: "TRUSTED_PROXIES", networks: "0.0.0.0/0", why: expect.stringContaining("x-real-ip") }),
    ]);
    const quiet = await startLines({ CLIENT_IP_HEADER: "x-real-ip", TRUSTED_PROXIES: "10.0.0.5" });
    expect(quiet.filter((line) => line.event === "client_ip_header_from_every_address")).toEqual([]);
    expect(quiet.find((line) => line.event === "listening")).toMatchObject({ clientIp: "x-real-ip from 10.0.0.5" });
  });
});

describe.skipIf(!redisServerAvailable())("npm run start:workers", () => {
  let database: TestDatabase;
  let redis: RedisServer;

  beforeAll(async () => {
    database = await freshDatabase();
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
    await database?.drop();
  });

  it("stops at start with the message when two workers would keep their limits in memory", async () => {
    const started = startServer({ DATABASE_URL: database.url, DENO_JOBS: "2" }, undefined, { startScript: true, script: "start:workers" });
    await expect(started).rejects.toThrow(/exited with 1:[\s\S]*DENO_JOBS: 2 workers need their rate limits in Redis/);
  });

  it("serves the interface from two worker processes, each on a port of its own, limits in Redis", async () => {
    const server = await startServer({ DATABASE_URL: database.url, REDIS_URL: redis.url, DENO_JOBS: "2" }, undefined, { startScript: true, script: "start:workers" });
    try {
      const workers = server.workers!;
      expect(workers).toHaveLength(2);
      expect(new Set(workers.map((worker) => worker.url)).size).toBe(2);
      const statuses = await Promise.all(workers.flatMap((worker) => Array.from({ length: 10 }, () => fetch(`${worker.url}/api/v2/frequencies`).then((r) => r.status))));
      expect(statuses).toEqual(Array(20).fill(200));
      // Each its own process, each naming itself on its lines.
      const pids = [1, 2].map((n) => new RegExp(`"event":"listening",.*"pid":(\\d+),.*"worker":${n}`).exec(server.logs())?.[1]);
      expect(new Set(pids).size).toBe(2);
    } finally {
      await server.stop();
    }
  });

  it("starts a worker that exits again, on the same ports, while the other serves", async () => {
    const [port, adminPort] = [await freePortRange(2), await freePortRange(2)];
    const server = await startServer(
      { DATABASE_URL: database.url, REDIS_URL: redis.url, DENO_JOBS: "2", PORT: String(port), ADMIN_PORT: String(adminPort) },
      undefined,
      { startScript: true, script: "start:workers" },
    );
    try {
      const first = Number(/"event":"listening",.*"pid":(\d+),.*"worker":1/.exec(server.logs())![1]);
      process.kill(first, "SIGKILL");
      await vi.waitFor(() => expect(server.logs()).toMatch(/"event":"worker_exited","worker":1,"code":137,"signal":"SIGKILL","restartInMs":1000/), { timeout: 120_000 });
      expect((await fetch(`${server.workers![1].url}/api/v2/frequencies`)).status).toBe(200);
      await vi.waitFor(async () => expect((await fetch(`${server.workers![0].adminUrl}/ready`)).status).toBe(200), { timeout: 120_000, interval: 100 });
      expect((await fetch(`${server.workers![0].url}/api/v2/frequencies`)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  it("replaces its workers on SIGHUP after a deploy replaced the Deno binary (npm ci), and keeps serving", async () => {
    // The supervisor run as start-workers.sh runs it, from a Deno binary of the test's own, which the
    // deploy replaces (a new file renamed over it, as npm ci leaves node_modules/deno/deno).
    const dir = mkdtempSync(join(tmpdir(), "cadence-deploy-"));
    const deno = join(dir, "deno");
    copyFileSync(realDeno, deno);
    chmodSync(deno, 0o755);
    const [port, adminPort] = [await freePortRange(2), await freePortRange(2)];
    const child = spawn(deno, ["run", "--allow-run", "--allow-env", "--allow-read", "functions/production/supervisor.ts", deno, "run", "-A", "functions/api/index.ts"], {
      cwd: root,
      env: childEnv({ DATABASE_URL: database.url, REDIS_URL: redis.url, DENO_JOBS: "2", PORT: String(port), ADMIN_PORT: String(adminPort) }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      await vi.waitFor(() => expect(output).toContain('"event":"workers_ready"'), { timeout: 120_000, interval: 50 });
      copyFileSync(realDeno, `${deno}.new`);
      chmodSync(`${deno}.new`, 0o755);
      renameSync(`${deno}.new`, deno);
      child.kill("SIGHUP");
      await vi.waitFor(() => expect(output).toMatch(/"event":"rolling_restart_(done|stopped)"/), { timeout: 120_000, interval: 50 });
      expect(output).toContain('"event":"rolling_restart_done"');
      expect(output).not.toContain("worker_spawn_failed");
      expect(child.exitCode).toBeNull();
      for (const at of [port, port + 1]) expect((await fetch(`http://127.0.0.1:${at}/api/v2/frequencies`)).status).toBe(200);
    } finally {
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("stops every worker on SIGTERM, each draining, and leaves none behind", async () => {
    const server = await startServer({ DATABASE_URL: database.url, REDIS_URL: redis.url, DENO_JOBS: "2" }, undefined, { startScript: true, script: "start:workers" });
    const pids = [1, 2].map((n) => Number(new RegExp(`"event":"listening",.*"pid":(\\d+),.*"worker":${n}`).exec(server.logs())![1]));
    await server.stop();
    expect(server.logs().match(/"event":"stopped","reason":"SIGTERM"/g)).toHaveLength(2);
    expect(pids.filter(alive)).toEqual([]);
  });

  it("stops a worker whose supervisor is killed, as a SIGTERM would: the pipe it reads closes", async () => {
    // Its sightings are written only at a stop: a minute between writes.
    const server = await startServer(
      { DATABASE_URL: database.url, REDIS_URL: redis.url, DENO_JOBS: "1", SIGHTINGS_FLUSH_MS: "60000" },
      undefined,
      { startScript: true, script: "start:workers" },
    );
    const worker = Number(/"event":"listening",.*"pid":(\d+),.*"worker":1/.exec(server.logs())![1]);
    expect((await fetch(`${server.url}/api/v2/licenses/DEMO-0000-0000-0004/schedule`)).status).toBe(200);
    process.kill(server.pid, "SIGKILL");
    await vi.waitFor(() => expect(alive(worker)).toBe(false), { timeout: 120_000, interval: 100 });
    await server.stop();
    // Its log went with the supervisor's pipe; what it wrote at its stop is in the database.
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      expect(await sql`select license_key from public.kiosk_sightings where license_key = 'DEMO-0000-0000-0004'`).toHaveLength(1);
    } finally {
      await sql.end();
    }
  });
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
