import { spawn } from "node:child_process";
import { request } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../functions/app/db/migrate.ts";
import { openPostgres } from "../../functions/app/db/postgres.ts";
import { childEnv } from "../support/child-env.ts";
import { type RunningProxy, startProxy } from "../support/haproxy.ts";
import { type PostgresServer, startPostgresServer } from "../support/postgres-server.ts";
import { type RedisServer, redisServerAvailable, startRedis } from "../support/redis.ts";
import { freePortRange, type RunningServer, startServer } from "../support/server.ts";

const DENO = new URL("../../node_modules/.bin/deno", import.meta.url).pathname;
/** Kiosks calling steadily through the proxy, a Deno process of its own. */
const STEADY_KIOSKS = new URL("../support/steady-kiosks.ts", import.meta.url).pathname;
const KEY = "DEMO-0000-0000-0001";
const EMAIL = "demo@example.com";
const SCHEDULE = `/api/v2/licenses/${KEY}/schedule`;
/** What a kiosk may be answered during a deploy: fresh, unchanged, or told to wait its limit out. */
const ACCEPTABLE = new Set(["200", "304", "429"]);

let kioskAddress = 0;
/** A loopback address of its own for each read (127.5.x.y), so no read meets the kiosk limit. */
const nextAddress = () => `127.5.${Math.floor(kioskAddress / 250) % 250}.${(kioskAddress++ % 250) + 1}`;

interface Answer {
  status: number;
  age: string | undefined;
  body: string;
}

/** One HTTPS call through the proxy, on a connection of its own; rejects on a reset or after 10 s unanswered. */
function send(proxy: RunningProxy, path: string, localAddress = nextAddress()) {
  return new Promise<Answer>((resolve, reject) => {
    const outgoing = request({ host: "127.0.0.1", port: proxy.port, path, localAddress, agent: false, ca: proxy.certificate, servername: "localhost" }, (incoming) => {
      let body = "";
      incoming.setEncoding("utf8");
      incoming.on("data", (chunk: string) => (body += chunk));
      incoming.on("end", () => resolve({ status: incoming.statusCode ?? 0, age: incoming.headers.age, body }));
      incoming.on("error", reject);
    });
    outgoing.setTimeout(10_000, () => outgoing.destroy(Object.assign(new Error("unanswered"), { code: "ETIMEDOUT" })));
    outgoing.on("error", reject);
    outgoing.end();
  });
}

/** Polls `condition` every 50 ms; the test's own timeout bounds the wait. */
async function until(condition: () => boolean | Promise<boolean>) {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** The pid of worker `n` now: the last `listening` line it logged (a restart logs a new one). */
function workerPid(server: RunningServer, n: number): number {
  const lines = [...server.logs().matchAll(/"event":"listening",.*"pid":(\d+),.*"worker":(\d+)/g)].filter((match) => Number(match[2]) === n);
  return Number(lines[lines.length - 1][1]);
}

/**
 * How many times HAProxy logged `server` going to `state` ("DOWN", "UP", "stopping"), in its log's
 * own lines (it also prints each as a warning).
 */
const marked = (proxy: RunningProxy, server: string, state: string) => proxy.logs().match(new RegExp(`^Server workers/${server} is ${state}\\b`, "gm"))?.length ?? 0;

/** The state HAProxy last logged for `server` (UP, DOWN, stopping, ...); UP, as it starts, before any. */
const lastState = (proxy: RunningProxy, server: string) =>
  [...proxy.logs().matchAll(new RegExp(`^Server workers/${server} is (\\w+)`, "gm"))].at(-1)?.[1] ?? "UP";

describe.skipIf(!redisServerAvailable())("HAProxy (functions/production/haproxy.cfg) checking each worker of npm run start:workers on its admin listener", () => {
  let cluster: PostgresServer;
  let redis: RedisServer;
  let workers: RunningServer;
  let proxy: RunningProxy;

  beforeAll(async () => {
    cluster = await startPostgresServer();
    const setup = openPostgres(cluster.url, { max: 1 });
    try {
      await migrate(setup, { seed: true });
    } finally {
      await setup.close();
    }
    redis = await startRedis();
    // Ports of their own, kept across a restart (PORT + i - 1, ADMIN_PORT + i - 1), which the proxy follows.
    const settings = { PORT: String(await freePortRange(2)), ADMIN_PORT: String(await freePortRange(2)), DENO_JOBS: "2" };
    workers = await startServer(
      { DATABASE_URL: cluster.url, REDIS_URL: redis.url, CLIENT_IP_HEADER: "x-real-ip", ...settings },
      undefined,
      { startScript: true, script: "start:workers" },
    );
    proxy = await startProxy(settings, 4096);
    expect((await send(proxy, SCHEDULE)).status).toBe(200);
  });
  afterAll(async () => {
    await proxy?.stop();
    await workers?.stop();
    await redis?.stop();
    await cluster?.stop();
  });

  describe("a rolling restart (SIGHUP to npm run start:workers) under kiosks calling steadily", () => {
    it("answers every call 200, 304 or 429, with no reset and none unanswered, while each worker is replaced in turn", async () => {
      const kiosks = spawn(DENO, ["run", "--allow-net", STEADY_KIOSKS, JSON.stringify({ port: proxy.port, ca: proxy.certificate, kiosks: 80, everyMs: 1_500, key: KEY, email: EMAIL })], {
        env: childEnv(),
        stdio: ["pipe", "pipe", "inherit"],
      });
      let printed = "";
      kiosks.stdout.on("data", (chunk: Buffer) => (printed += chunk));
      const answered = () => Number([...printed.matchAll(/"answered":(\d+)/g)].at(-1)?.[1] ?? 0);
      const finished = new Promise<void>((resolve) => kiosks.once("exit", () => resolve()));
      const before = [workerPid(workers, 1), workerPid(workers, 2)];
      await until(() => answered() >= 100);
      const started = performance.now();
      process.kill(workers.pid, "SIGHUP");
      const atSignal = answered();
      await until(() => workers.logs().includes('"event":"rolling_restart_done"'));
      const restartMs = performance.now() - started;
      // The new workers carry the calls too.
      const afterRestart = answered();
      await until(() => answered() >= afterRestart + 200);
      kiosks.stdin.end();
      await finished;
      const tally: { statuses: Record<string, number>; failures: Record<string, number>; samples: Record<string, { body: string; retryAfter?: string }> } = JSON.parse(printed.trim().split("\n").at(-1)!);
      console.log(`rolling restart of 2 workers in ${Math.round(restartMs)} ms under 80 kiosks calling every 1.5 s (about ${afterRestart - atSignal} answers during it): ${JSON.stringify(tally)}`);
      expect(Object.keys(tally.statuses).filter((status) => !ACCEPTABLE.has(status)), JSON.stringify(tally.samples)).toEqual([]);
      expect(tally.failures).toEqual({});
      expect([workerPid(workers, 1), workerPid(workers, 2)]).not.toContain(before[0]);
      expect([workerPid(workers, 1), workerPid(workers, 2)]).not.toContain(before[1]);
      // Each old worker drained: HAProxy read its 404 and stopped sending it requests (NOLB). Whether a
      // check also timed out on a machine too busy to answer it in 2 s is the machine's, not the drain's:
      // the calls' tally above is the rule.
      expect([marked(proxy, "w1", "stopping"), marked(proxy, "w2", "stopping")]).toEqual([1, 1]);
    });
  });

  describe("a worker whose event loop is stuck", () => {
    it("is marked down by HAProxy's check, and the other worker answers every read meanwhile", async () => {
      // Not down first: on a busy machine a check may have timed out since the restart above, and a
      // worker already down would never be marked down again.
      await until(() => lastState(proxy, "w1") !== "DOWN");
      const stuck = workerPid(workers, 1);
      process.kill(stuck, "SIGSTOP");
      try {
        const started = performance.now();
        await until(() => lastState(proxy, "w1") === "DOWN");
        const detectedMs = performance.now() - started;
        const reads = await Promise.all(Array.from({ length: 20 }, () => send(proxy, SCHEDULE).then((answer) => answer.status)));
        console.log(`a stuck worker (SIGSTOP) marked down after ${Math.round(detectedMs)} ms; reads then: ${JSON.stringify(reads)}`);
        expect(reads).toEqual(Array(20).fill(200));
      } finally {
        process.kill(stuck, "SIGCONT");
      }
      await until(() => lastState(proxy, "w1") === "UP");
    });
  });

  describe("a database outage", () => {
    it("keeps every worker in the proxy, each answering kiosks from what it last read (with Age)", async () => {
      // Each worker reads the schedule while the database answers: reads go round-robin.
      for (let i = 0; i < 6; i++) expect((await send(proxy, SCHEDULE)).status).toBe(200);
      const downBefore = marked(proxy, "w1", "DOWN") + marked(proxy, "w2", "DOWN");
      await cluster.crash();
      try {
        // Past three checks of each worker (HAProxy's fall), one a second.
        const until = performance.now() + 4_000;
        const reads: Answer[] = [];
        while (performance.now() < until) reads.push(await send(proxy, SCHEDULE));
        const readyNow = await Promise.all(workers.workers!.map((worker) => fetch(`${worker.adminUrl}/ready`).then(async (r) => ({ status: r.status, body: await r.json() }))));
        console.log(`database down: ${reads.length} reads through the proxy, statuses ${JSON.stringify(countOf(reads.map((read) => read.status)))}; /ready ${JSON.stringify(readyNow)}`);
        expect(reads.filter((read) => read.status !== 200 || read.age === undefined)).toEqual([]);
        expect(readyNow).toEqual([1, 2].map(() => ({ status: 200, body: { status: "ready", waitingFor: [], database: "unavailable" } })));
        expect(marked(proxy, "w1", "DOWN") + marked(proxy, "w2", "DOWN")).toBe(downBefore);
      } finally {
        await cluster.start();
      }
    });
  });

  describe("the admin listeners", () => {
    it("are not reachable through the public proxy: /live, /ready and /metrics there are the API's 404", async () => {
      for (const path of ["/live", "/ready", "/metrics"]) {
        expect(await send(proxy, path)).toMatchObject({ status: 404, body: '{"message":"not found"}' });
      }
    });
  });
});

const countOf = (values: unknown[]) => values.reduce<Record<string, number>>((all, value) => ({ ...all, [String(value)]: (all[String(value)] ?? 0) + 1 }), {});
