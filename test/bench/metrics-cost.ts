/// <reference lib="deno.ns" />
// `npm run bench -- --metrics [--rounds N] [scenario names]`: what the admin listener's metrics cost
// each route (issue 52: within 3 %). The working tree twice, in one run: with ADMIN_PORT set (every
// request timed into the histogram, the database's and the limiter's failures counted) and without
// (no admin listener, no middleware), each on a database of its own, Postgres direct, limits in
// memory, measured side by side (side-by-side.ts); then the timing's own cost, measured inside one
// process (metrics-in-process.ts), as a share of the server's CPU per request over HTTP.
import { type RunningServer, startServer } from "../support/server.ts";
import { benchDatabase, copyDatabase } from "./database.ts";
import type { BenchFlags } from "./flags.ts";
import { selectScenarios } from "./scenarios.ts";
import { measureTimingCost } from "./metrics-in-process.ts";
import { measureSideBySide, serverMicrosecondsPerRequest, sideBySideTable } from "./side-by-side.ts";

/**
 * Measures every scenario with the metrics on beside off and prints the table.
 *
 * @example
 * await compareMetrics({ rounds: 2, scenarios: [] });
 */
export async function compareMetrics(flags: Pick<BenchFlags, "rounds" | "scenarios">): Promise<void> {
  const progress = (line: string) => console.error(`bench: ${line}`);
  progress("starting Postgres 15 and applying migrations and seed with the Supabase CLI");
  const database = await benchDatabase();
  const servers: RunningServer[] = [];
  try {
    const sides = [];
    for (const [label, admin] of [["metrics off", {}], ["metrics on", { ADMIN_PORT: "0" }]] as const) {
      // A database each: neither reads what the other's requests wrote (validations, sightings).
      const url = await copyDatabase(database, `bench_${label.replace(" ", "_")}`);
      // wrk sends every request from its own X-Forwarded-For: the limiter runs on each, never refusing one.
      const server = await startServer({ DATABASE_URL: url, TRUST_PROXY: "true", ...admin });
      servers.push(server);
      progress(`${label}: listening at ${server.url}${server.adminUrl ? `, metrics at ${server.adminUrl}/metrics` : ""}`);
      sides.push({ label, server });
    }
    const rounds = flags.rounds ?? 1;
    const rows = await measureSideBySide(sides, selectScenarios(flags.scenarios), progress, rounds);
    console.log(`\nThe admin listener's metrics off and on, Postgres direct: requests/s, mean of ${2 * rounds} interleaved runs each (wrk -t2 -c50, 8 s)`);
    console.log(sideBySideTable(rows, sides.map((side) => side.label)));
    const scraped = await (await fetch(`${servers[1].adminUrl}/metrics`)).text();
    const counted = [...scraped.matchAll(/^http_server_request_duration_seconds_count\{[^}]*\} (\d+)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
    console.log(`\nThe metrics-on server counted ${counted.toLocaleString("en")} requests in its histogram.`);
    const timing = await measureTimingCost(await copyDatabase(database, "bench_in_process"), progress);
    const [low, high] = timing.deltaQuartiles;
    console.log(
      `\nThe timing's own cost, in one process (metrics-in-process.ts): on the catalogue read served from memory, ` +
        `${timing.untimedMicros.toFixed(2)} µs of CPU a request untimed and ${timing.timedMicros.toFixed(2)} µs timed (median batches); ` +
        `the pairs' median difference ${timing.deltaMicros.toFixed(2)} µs (quartiles ${low.toFixed(2)} to ${high.toFixed(2)}), ` +
        "as a share of each route's server CPU per request over HTTP with the metrics off (Deno.serve's and the kernel's share included):",
    );
    console.log("| route | server µs/request, metrics off | timing µs/request | cost |");
    console.log("|---|---|---|---|");
    for (const row of rows) {
      const server = serverMicrosecondsPerRequest(row.bySide.get("metrics off")!);
      console.log(`| ${row.scenario} | ${server.toFixed(1)} | ${timing.deltaMicros.toFixed(2)} | ${((timing.deltaMicros / server) * 100).toFixed(1)} % |`);
    }
  } finally {
    for (const server of servers) await server.stop();
    await database.server.stop();
  }
}
