import { spawn } from "node:child_process";
import { chmodSync, copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
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

  /**
   * The supervisor as start-workers.sh runs it (its first argument the release path, which a deploy
   * re-points), from a Deno binary of the test's own; under systemd's RUNTIME_DIRECTORY, where it
   * writes how each rolling restart ended.
   */
  async function supervised(release: string, dir: string) {
    const deno = join(dir, "deno");
    copyFileSync(realDeno, deno);
    chmodSync(deno, 0o755);
    const [port, adminPort] = [await freePortRange(2), await freePortRange(2)];
    const child = spawn(deno, ["run", "--allow-run", "--allow-env", "--allow-read", `--allow-write=${dir}`, "functions/production/supervisor.ts", release, "run", "-A", "functions/api/index.ts"], {
      cwd: root,
      env: childEnv({ DATABASE_URL: database.url, REDIS_URL: redis.url, DENO_JOBS: "2", PORT: String(port), ADMIN_PORT: String(adminPort), RUNTIME_DIRECTORY: dir }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    await vi.waitFor(() => expect(output).toContain('"event":"workers_ready"'), { timeout: 120_000, interval: 50 });
    return {
      child,
      deno,
      ports: [port, port + 1],
      output: () => output,
      /** The release each worker runs in: its process's working directory. */
      releases: () => [1, 2].map((n) => realpathSync(`/proc/${[...output.matchAll(new RegExp(`"event":"listening",.*"pid":(\\d+),.*"worker":${n}\\b`, "g"))].at(-1)![1]}/cwd`)),
      async stop() {
        child.kill("SIGTERM");
        await exited;
      },
    };
  }

  it("replaces its workers on SIGHUP after the binary it runs from was replaced, and keeps serving", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cadence-deploy-"));
    const supervisor = await supervised(root, dir);
    try {
      // A new file renamed over the supervisor's own binary, as npm ci leaves node_modules/deno/deno.
      copyFileSync(realDeno, `${supervisor.deno}.new`);
      chmodSync(`${supervisor.deno}.new`, 0o755);
      renameSync(`${supervisor.deno}.new`, supervisor.deno);
      supervisor.child.kill("SIGHUP");
      await vi.waitFor(() => expect(supervisor.output()).toMatch(/"event":"rolling_restart_(done|stopped)"/), { timeout: 120_000, interval: 50 });
      expect(supervisor.output()).toContain('"event":"rolling_restart_done"');
      expect(supervisor.output()).not.toContain("worker_spawn_failed");
      expect(supervisor.child.exitCode).toBeNull();
      for (const at of supervisor.ports) expect((await fetch(`http://127.0.0.1:${at}/api/v2/frequencies`)).status).toBe(200);
    } finally {
      await supervisor.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("puts every worker of a rolling restart back on the release it ran when a later worker of the new one cannot start, and says so", async () => {
    // Not under /dev/shm (the tests' usual scratch space): Deno resolves a path under /dev only with --allow-all.
    const dir = mkdtempSync("/tmp/cadence-deploy-");
    // Two releases behind a symlink, as release.sh lays them out: this checkout, and a copy of its
    // code whose second worker exits at start.
    const [first, second] = [join(dir, "first"), join(dir, "second")];
    symlinkSync(root, first);
    mkdirSync(second);
    for (const path of ["functions", "supabase", "sql", "package.json"]) cpSync(join(root, path), join(second, path), { recursive: true });
    symlinkSync(join(root, "node_modules"), join(second, "node_modules"));
    const entry = join(second, "functions/api/index.ts");
    writeFileSync(entry, `if (Deno.env.get("WORKER") === "2") throw new Error("a release whose second worker cannot start");\n${readFileSync(entry, "utf8")}`);
    const current = join(dir, "current");
    symlinkSync(first, current);
    const supervisor = await supervised(current, dir);
    try {
      const before = supervisor.releases();
      expect(before).toEqual([realpathSync(first), realpathSync(first)]);
      rmSync(current);
      symlinkSync(second, current);
      supervisor.child.kill("SIGHUP");
      await vi.waitFor(() => expect(readFileSync(join(dir, "rolling-restart"), "utf8")).toMatch(/^1 stopped /), { timeout: 240_000, interval: 50 });
      expect(readFileSync(join(dir, "rolling-restart"), "utf8")).toBe(`1 stopped ${realpathSync(second)} worker 2 exited with 1 before it was ready; every worker is back on ${realpathSync(first)}\n`);
      expect(supervisor.output()).toMatch(/"event":"rolling_restart_stopped","worker":2,/);
      expect(supervisor.releases()).toEqual(before);
      for (const at of supervisor.ports) expect((await fetch(`http://127.0.0.1:${at}/api/v2/frequencies`)).status).toBe(200);
    } finally {
      await supervisor.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("stops every worker on SIGTERM, each draining, and leaves none behind", async () => {
    const server = await startServer({ DATABASE_URL: database.url, REDIS_URL: redis.url, DENO_JOBS: "2" }, undefined, { startScript: true, script: "start:workers" });
    const pids = [1, 2].map((n) => Number(new RegExp(`"event":"listening",.*"pid":(\\d+),.*"worker":${n}`).exec(server.logs())![1]));
    await server.stop();
    expect(server.logs().match(/"event":"stopped","reason":"SIGTERM"/g) ?? [], server.logs()).toHaveLength(2);
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
