/// <reference lib="deno.ns" />
import { connect } from "node:net";
import { startPgBouncer } from "../support/pgbouncer.ts";
import { startRedis } from "../support/redis.ts";
import { startServer } from "../support/server.ts";
import { benchDatabase } from "./database.ts";
import { DEFAULT_DELAY_MS, type DelayProxy, startDelayProxy } from "./delay-proxy.ts";
import type { BenchFlags } from "./flags.ts";
import { type Scenario, scenarios } from "./scenarios.ts";

/** A request a kiosk sends, and the status a correct answer has. */
type Route = Pick<Scenario, "name" | "path" | "status" | "headers" | "body" | "conditional"> & { method: string };

/** Sequential requests per route and cell (after a few to warm up): enough for a steady median. */
const DEFAULT_REQUESTS = 200;
const WARM_UP = 5;
/**
 * The most round trips each route may wait in sequence with the database delayed (one statement:
 * 1.1; the catalogue, served from memory: none) and with both the database and the limiter
 * delayed: a read whose limit is checked alongside it waits for the later of the two (1.1), a
 * write checks its limit first (2.1). A tenth of a round trip is the measurement's noise.
 */
const TARGETS: Record<string, { database: number; both: number }> = {
  "frequencies": { database: 0.1, both: 0.1 },
  "proclamations (all)": { database: 0.1, both: 0.1 },
  "proclamations (entitled)": { database: 1.1, both: 1.1 },
  "license schedule 200": { database: 1.1, both: 1.1 },
  "license schedule 304": { database: 1.1, both: 1.1 },
  "legacy schedule": { database: 1.1, both: 1.1 },
  "license validation": { database: 1.1, both: 2.1 },
  "system-name write": { database: 1.1, both: 2.1 },
};

/** The kiosk routes: the throughput scenarios sent by one kiosk (not the fleet), and a system-name write. */
const routes: Route[] = [
  ...scenarios.filter((scenario) => !scenario.fleet),
  {
    name: "system-name write", method: "PUT", path: "/api/v2/licenses/DEMO-0000-0000-0001/system-name", status: 200,
    headers: { "content-type": "application/json" }, body: JSON.stringify({ systemName: "Front desk" }),
  },
];

/** Which of the two services sits a distance away in a cell. */
const cells = [
  { name: "near", database: false, limiter: false },
  { name: "database delayed", database: true, limiter: false },
  { name: "limiter delayed", database: false, limiter: true },
  { name: "both delayed", database: true, limiter: true },
] as const;

const rounded = (trips: number) => trips.toFixed(2).replace(/^-0\.00$/, "0.00");

function median(values: number[]): number {
  const sorted = values.toSorted((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * The round trip a delay proxy really adds (its delay twice, plus what the timers add), from the
 * median of `count` PINGs to the Redis behind it, delayed and not.
 */
async function measuredRoundTripMs(proxy: DelayProxy, delayMs: number, count: number): Promise<number> {
  const socket = connect(proxy.port, "127.0.0.1");
  socket.setNoDelay(true);
  await new Promise((resolve) => socket.once("connect", resolve));
  const ping = () =>
    new Promise<number>((resolve) => {
      const started = performance.now();
      socket.once("data", () => resolve(performance.now() - started));
      socket.write("PING\r\n");
    });
  const medianOf = async (delay: number) => {
    proxy.setDelay(delay);
    const times: number[] = [];
    for (let i = 0; i < count; i++) times.push(await ping());
    return median(times);
  };
  try {
    return (await medianOf(delayMs)) - (await medianOf(0));
  } finally {
    proxy.setDelay(0);
    socket.destroy();
  }
}

/**
 * `npm run bench -- --distance [--requests=N] [--delay=MS]`: the production configuration
 * (Postgres through PgBouncer in transaction mode on `SUPABASE_DB_URL`, rate limits in a
 * redis-server on `REDIS_URL`) with a delay proxy in front of PgBouncer and one in front of Redis.
 * Each kiosk route is sent `N` times in sequence with neither, the database's, the limiter's and
 * both proxies delaying; the median added latency over the round trip the proxy adds (twice the
 * delay, as measured with PINGs) is the number of round trips the route waits in sequence.
 */
export async function measureDistance(flags: Pick<BenchFlags, "requests" | "delay">): Promise<void> {
  const requests = flags.requests ?? DEFAULT_REQUESTS;
  const delayMs = flags.delay ?? DEFAULT_DELAY_MS;
  const progress = (line: string) => console.error(`bench distance: ${line}`);

  progress("starting Postgres 15, PgBouncer, redis-server and a delay proxy in front of each");
  const database = await benchDatabase();
  const stops: Array<() => Promise<void>> = [() => database.server.stop()];
  try {
    const pooler = await startPgBouncer(database.server.port);
    stops.unshift(() => pooler.stop());
    const redis = await startRedis();
    stops.unshift(() => redis.stop());
    const databaseProxy = await startDelayProxy(pooler.port);
    stops.unshift(() => databaseProxy.stop());
    const limiterProxy = await startDelayProxy(Number(new URL(redis.url).port));
    stops.unshift(() => limiterProxy.stop());
    const databaseUrl = new URL(pooler.through(database.url));
    databaseUrl.port = String(databaseProxy.port);
    const server = await startServer({
      SUPABASE_DB_URL: databaseUrl.href,
      REDIS_URL: `redis://127.0.0.1:${limiterProxy.port}`,
      // Each request names its own client, so no rate limit refuses one.
      CLIENT_IP_HEADER: "x-forwarded-for",
    });
    stops.unshift(() => server.stop());

    const roundTripMs = await measuredRoundTripMs(limiterProxy, delayMs, requests);
    progress(`one round trip through a proxy at ${delayMs} ms each way: ${roundTripMs.toFixed(1)} ms`);

    let address = 0;
    async function send(route: Route, headers: Record<string, string>) {
      address += 1;
      const started = performance.now();
      const response = await fetch(server.url + route.path, {
        method: route.method,
        headers: { ...headers, "x-forwarded-for": `10.${(address >> 16) & 255}.${(address >> 8) & 255}.${address & 255}` },
        body: route.body,
      });
      const etag = response.headers.get("etag");
      await response.arrayBuffer();
      const ms = performance.now() - started;
      if (response.status !== route.status) throw new Error(`${route.name}: answered ${response.status}, not ${route.status}`);
      return { ms, etag };
    }

    const rows: Array<{ route: string; nearMs: number; roundTrips: number[] }> = [];
    for (const route of routes) {
      const headers = { ...route.headers };
      if (route.conditional) {
        const { etag } = await send({ ...route, status: 200 }, headers);
        headers["if-none-match"] = etag!;
      }
      const medians: number[] = [];
      for (const cell of cells) {
        databaseProxy.setDelay(cell.database ? delayMs : 0);
        limiterProxy.setDelay(cell.limiter ? delayMs : 0);
        for (let i = 0; i < WARM_UP; i++) await send(route, headers);
        const times: number[] = [];
        for (let i = 0; i < requests; i++) times.push((await send(route, headers)).ms);
        medians.push(median(times));
        progress(`${route.name}, ${cell.name}: median ${median(times).toFixed(1)} ms`);
      }
      const [near, ...delayed] = medians;
      rows.push({ route: route.name, nearMs: near, roundTrips: delayed.map((ms) => (ms - near) / roundTripMs) });
    }

    console.log(`Round trips waited in sequence per kiosk route: median added latency / round trip (${delayMs} ms each way, measured ${roundTripMs.toFixed(1)} ms),`);
    console.log(`${requests} sequential requests per cell; production configuration (SUPABASE_DB_URL through PgBouncer, REDIS_URL).`);
    const header = ["route", "near, median ms", "database delayed (target)", "limiter delayed", "both delayed (target)"];
    const judged = (trips: number, target: number) => `${rounded(trips)} (<= ${target} ${trips <= target ? "PASS" : "MISS"})`;
    const lines = rows.map((row) => {
      const [database, limiter, both] = row.roundTrips;
      const target = TARGETS[row.route];
      return [row.route, row.nearMs.toFixed(1), judged(database, target.database), rounded(limiter), judged(both, target.both)];
    });
    const widths = header.map((_, column) => Math.max(...[header, ...lines].map((line) => line[column].length)));
    const format = (line: string[]) => `| ${line.map((cell, column) => cell.padEnd(widths[column])).join(" | ")} |`;
    console.log(format(header));
    console.log(`|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`);
    for (const line of lines) console.log(format(line));
  } finally {
    for (const stop of stops) await stop();
  }
}
