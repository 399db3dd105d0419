import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { workerMetrics } from "../../functions/app/admin/metrics.ts";
import { observedDatabase } from "../../functions/app/db/observed-database.ts";
import { observedLimiter } from "../../functions/app/rate-limit/observed-limiter.ts";
import type { Database } from "../../functions/app/db/database.ts";
import { DatabaseBusy, DatabaseUnavailable } from "../../functions/app/db/unavailable.ts";
import { LimiterUnavailable, type RateLimiter } from "../../functions/app/rate-limit/limiter.ts";
import { RULES } from "../../functions/app/rate-limit/rules.ts";
import { freshDatabase, type TestDatabase } from "../support/database.ts";
import { freePort } from "../support/postgres-server.ts";
import { type RedisServer, redisServerAvailable, startRedis } from "../support/redis.ts";
import { type RunningServer, startServer } from "../support/server.ts";

/** Every family the issue asks an operator to see, by the name it is scraped under. */
const FAMILIES = [
  "http_server_request_duration_seconds",
  "cadence_database_pool_connections",
  "cadence_database_pool_max_connections",
  "cadence_database_pool_waiting_statements",
  "cadence_database_write_lane_slots",
  "cadence_database_write_lane_waiting_writes",
  "cadence_database_available",
  "cadence_database_statements_shed_total",
  "cadence_database_statements_unavailable_total",
  "cadence_rate_limit_store_errors_total",
  "cadence_kiosk_sightings_held",
  "cadence_outbox_pending_emails",
  "cadence_outbox_oldest_pending_age_seconds",
  "cadence_seat_suspicions",
  "cadence_kiosks_online",
  "cadence_kiosks_dark",
  "cadence_event_loop_delay_max_seconds",
  "cadence_requests_in_flight",
  "cadence_requests_waiting",
  "cadence_requests_shed_total",
  "process_resident_memory_bytes",
  "process_cpu_seconds_total",
];

const scrape = async (adminUrl: string) => (await fetch(`${adminUrl}/metrics`)).text();

/** `promtool check metrics` on `text`: its exit status and everything it printed. */
function promtool(text: string): { status: number; printed: string } {
  try {
    return { status: 0, printed: execFileSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8", stdio: ["pipe", "pipe", "pipe"] }) };
  } catch (error) {
    const failed = error as { status: number; stdout: string; stderr: string };
    return { status: failed.status, printed: failed.stdout + failed.stderr };
  }
}

/** Debian's prometheus scraping `targets` every second, its data in a directory of its own. */
async function startPrometheus(targets: string[]) {
  const dir = mkdtempSync(join(tmpdir(), "cadence-prometheus-"));
  const port = await freePort();
  writeFileSync(join(dir, "prometheus.yml"), [
    "global:",
    "  scrape_interval: 1s",
    "scrape_configs:",
    "  - job_name: cadence",
    "    static_configs:",
    `      - targets: [${targets.map((target) => `'${target}'`).join(", ")}]`,
  ].join("\n"));
  const child: ChildProcess = spawn("prometheus", [
    `--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn",
  ], { stdio: "ignore" });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    /** One instant query's samples, as `{ labels, value }`; none while Prometheus is still starting. */
    async query(expression: string): Promise<Array<{ metric: Record<string, string>; value: number }>> {
      try {
        const answer = await (await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(expression)}`)).json();
        return answer.data.result.map((sample: { metric: Record<string, string>; value: [number, string] }) => ({ metric: sample.metric, value: Number(sample.value[1]) }));
      } catch {
        return [];
      }
    },
    async stop() {
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe.skipIf(!redisServerAvailable())("/metrics of each worker of npm run start:workers, scraped by Prometheus", () => {
  let database: TestDatabase;
  let redis: RedisServer;
  let server: RunningServer;

  beforeAll(async () => {
    database = await freshDatabase();
    redis = await startRedis();
    server = await startServer({ DATABASE_URL: database.url, REDIS_URL: redis.url, DENO_JOBS: "2" }, undefined, { startScript: true, script: "start:workers" });
  });
  afterAll(async () => {
    await server?.stop();
    await redis?.stop();
    await database?.drop();
  });

  it("is Prometheus' text format that promtool check metrics passes without a word, on every worker", async () => {
    for (const worker of server.workers!) {
      await fetch(`${worker.url}/api/v2/frequencies`);
      const response = await fetch(`${worker.adminUrl}/metrics`);
      expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
      expect(promtool(await response.text())).toEqual({ status: 0, printed: "" });
    }
  });

  it("has every family an operator watches: requests by route and status with their durations, the pool, sheds, limiter errors, the outbox, sightings, seat suspicions, kiosks online and dark", async () => {
    const text = await scrape(server.workers![0].adminUrl);
    const families = [...text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]);
    expect(families).toEqual(expect.arrayContaining(FAMILIES));
  });

  it("labels requests by the route's template, never the path a key is in, and counts each worker's own", async () => {
    const [first, second] = server.workers!;
    for (let i = 0; i < 3; i++) await fetch(`${first.url}/api/v2/licenses/DEMO-0000-0000-0002/schedule`);
    const text = await scrape(first.adminUrl);
    expect(text).toMatch(/http_server_request_duration_seconds_count\{http_request_method="GET",http_route="\/api\/v2\/licenses\/\{licenseKey\}\/schedule",http_response_status_code="200"\} 3/);
    expect(text).not.toContain("DEMO-0000");
    expect(await scrape(second.adminUrl)).not.toContain("{licenseKey}");
  });

  it("labels a request no route answered with an empty route, so a made-up path adds no series, and names the OpenAPI document's", async () => {
    const [first] = server.workers!;
    await fetch(`${first.url}/api/v2/no-such-route-${"x".repeat(8)}`);
    await fetch(`${first.url}/api/v2/openapi.json`);
    const text = await scrape(first.adminUrl);
    expect(text).toMatch(/http_server_request_duration_seconds_count\{http_request_method="GET",http_route="",http_response_status_code="404"\} [1-9]/);
    expect(text).toMatch(/http_server_request_duration_seconds_count\{http_request_method="GET",http_route="\/api\/v2\/openapi\.json",http_response_status_code="200"\} [1-9]/);
    expect(text).not.toContain("no-such-route");
  });

  it("adds every worker up when Prometheus scrapes each (a target per admin port)", async () => {
    const [first, second] = server.workers!;
    const path = "/api/v2/color-palettes";
    for (let i = 0; i < 4; i++) await fetch(`${first.url}${path}`);
    for (let i = 0; i < 7; i++) await fetch(`${second.url}${path}`);
    const prometheus = await startPrometheus(server.workers!.map((worker) => new URL(worker.adminUrl).host));
    try {
      const total = `sum(http_server_request_duration_seconds_count{http_route="${path}"})`;
      await vi.waitFor(async () => expect(await prometheus.query(total)).toEqual([{ metric: {}, value: 11 }]), { timeout: 60_000, interval: 250 });
      expect(await prometheus.query("sum(up)")).toEqual([{ metric: {}, value: 2 }]);
      // The fleet's gauges come from worker 1 alone: a sum counts them once.
      expect((await prometheus.query("cadence_kiosks_online")).map((sample) => sample.metric.instance)).toEqual([new URL(first.adminUrl).host]);
    } finally {
      await prometheus.stop();
    }
  });
});

describe("what the metrics count where it happens (db/observed-database.ts, rate-limit/observed-limiter.ts)", () => {
  const failing = (error: Error): Database => ({ query: () => Promise.reject(error), script: () => Promise.resolve(), close: () => Promise.resolve() });
  const count = (text: string, name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)$`, "m").exec(text)?.[1] ?? 0);

  it("counts a statement shed as back-pressure apart from one that found the database unavailable, and never a statement's own error", async () => {
    const metrics = workerMetrics();
    for (const error of [new DatabaseBusy("pool"), new DatabaseBusy("lane"), new DatabaseUnavailable("refused"), new Error("duplicate key")]) {
      await observedDatabase(failing(error), metrics.databaseFailed).query("select 1").catch(() => {});
    }
    const text = await metrics.scrape();
    expect(count(text, "cadence_database_statements_shed_total")).toBe(2);
    expect(count(text, "cadence_database_statements_unavailable_total")).toBe(1);
  });

  it("counts a rate-limit check its store could not answer, by rule", async () => {
    const metrics = workerMetrics();
    const down: RateLimiter = {
      limit: () => Promise.reject(new LimiterUnavailable("no answer within 500 ms")),
      isRefused: () => false,
      refund: () => Promise.resolve(),
    };
    await observedLimiter(down, metrics.limiterUnavailable).limit(RULES.license, "203.0.113.7").catch(() => {});
    expect(await metrics.scrape()).toContain(`cadence_rate_limit_store_errors_total{rule="${RULES.license.name}"} 1`);
  });
});
