/// <reference lib="deno.ns" />
// The metrics' own cost, measured inside one process: the same app answers each scenario's requests
// untimed and timed (http/request-timing.ts, observed into the histogram), in batches alternated
// every few milliseconds. Over HTTP on two cores one run of a route swings by up to 13 % from the
// next (measured: 20 pairs of 2 s runs, the pair ratios' standard deviation 0.11), four times the
// 3 % being judged; a swing of the machine's speed lasts far longer than a batch here, so it moves
// both sides of a pair alike. The timing does the same work whatever the route (two clock reads and
// one observation; a `.catch` on each statement), so it is measured on the route that reads no
// database, where nothing else moves: a route that waits for Postgres in a sequential loop spends
// 175 µs of the process's CPU a request, and its batches swing by more than the timing costs.
import process from "node:process";
import { workerMetrics } from "../../functions/app/admin/metrics.ts";
import { createApp } from "../../functions/app/app.ts";
import { parseConfig } from "../../functions/app/config.ts";
import { type AppFetch, timedFetch } from "../../functions/app/http/request-timing.ts";
import { openRuntime } from "../../functions/app/runtime.ts";
import { scenarios } from "./scenarios.ts";

/** Paired batches per scenario: each pair is untimed, timed, timed, untimed. */
const PAIRS = 40;
/** A batch's length: long enough for the CPU clock (getrusage, 1 µs), short against the machine's swings. */
const BATCH_MS = 60;

export interface TimingCost {
  /** The process's CPU per request (user + system, all threads), untimed and timed: the median batch. */
  untimedMicros: number;
  timedMicros: number;
  /** The median over pairs of (timed - untimed) per request, with the pairs' quartiles. */
  deltaMicros: number;
  deltaQuartiles: [number, number];
}

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

const median = (values: number[]) => quantile(values, 0.5);
function quantile(values: number[], q: number): number {
  const sorted = values.toSorted((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  return sorted[low] + (sorted[Math.ceil(at)] - sorted[low]) * (at - low);
}

/**
 * Opens the app on `databaseUrl` in this process (limits in memory, the client's address taken
 * from X-Forwarded-For, each request its own, so no limit refuses one) and measures the timing's
 * cost on the first scenario, the catalogue read served from memory.
 *
 * @example
 * const cost = await measureTimingCost(url, console.error);
 */
export async function measureTimingCost(databaseUrl: string, progress: (line: string) => void): Promise<TimingCost> {
  const metrics = workerMetrics();
  const config = parseConfig({ DATABASE_URL: databaseUrl, TRUST_PROXY: "true" });
  // Its warnings are the bench's: a statement shed or a limit refused would show here first.
  const runtime = await openRuntime(config, (level, event, fields) => level !== "info" && progress(`in process: ${level} ${event} ${JSON.stringify(fields)}`), metrics);
  try {
    const app = createApp(runtime.deps);
    const untimed: AppFetch = (request, env) => app.fetch(request, env);
    const timed = timedFetch(untimed, metrics.observeRequest);
    const scenario = scenarios[0];
    const url = `http://127.0.0.1${scenario.path}`;
    let address = 0;
    const request = () => {
      const n = ++address;
      return new Request(url, { headers: { "x-forwarded-for": `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` } });
    };
    const batch = async (fetch: AppFetch, size: number) => {
      // A catalogue read answers within microtasks: without a turn of the event loop between batches,
      // the runtime's own I/O (its pool, its timers) would wait out every pair and its statements
      // their deadlines, as no server's requests, each a task of its own, ever make them.
      await new Promise((resolve) => setTimeout(resolve, 0));
      const started = cpuMicros();
      for (let i = 0; i < size; i++) {
        const response = await fetch(request(), { remoteAddr: "127.0.0.1" });
        if (response.status !== scenario.status) throw new Error(`${scenario.name} answered ${response.status} in process, not ${scenario.status}: ${await response.text()}`);
        await response.arrayBuffer();
      }
      return (cpuMicros() - started) / size;
    };
    // Warm both paths, then size a batch to BATCH_MS of this route's CPU.
    for (let i = 0; i < 4; i++) await batch(untimed, 200), await batch(timed, 200);
    const size = Math.max(50, Math.round((BATCH_MS * 1000) / (await batch(untimed, 200))));
    const untimedRuns: number[] = [], timedRuns: number[] = [], deltas: number[] = [];
    for (let pair = 0; pair < PAIRS; pair++) {
      const a = await batch(untimed, size), b = await batch(timed, size), c = await batch(timed, size), d = await batch(untimed, size);
      untimedRuns.push(a, d);
      timedRuns.push(b, c);
      deltas.push((b + c - a - d) / 2);
    }
    const cost: TimingCost = {
      untimedMicros: median(untimedRuns),
      timedMicros: median(timedRuns),
      deltaMicros: median(deltas),
      deltaQuartiles: [quantile(deltas, 0.25), quantile(deltas, 0.75)],
    };
    progress(`${scenario.name}, in process: ${cost.untimedMicros.toFixed(2)} µs untimed, ${cost.timedMicros.toFixed(2)} µs timed (batches of ${size})`);
    return cost;
  } finally {
    await runtime.close();
  }
}
