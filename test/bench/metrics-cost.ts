/// <reference lib="deno.ns" />
// `npm run bench -- --metrics [--rounds N] [scenario names]`: what the admin listener's metrics cost
// each route (issue 52: within 3 %). The working tree twice, in one run: with ADMIN_PORT set (every
// request timed into the histogram, the database's and the limiter's failures counted) and without
// (no admin listener, no middleware), each on a database of its own, Postgres direct, limits in
// memory, measured side by side (side-by-side.ts).
import { type RunningServer, startServer } from "../support/server.ts";
import { benchDatabase, copyDatabase } from "./database.ts";
import type { BenchFlags } from "./flags.ts";
import { selectScenarios } from "./scenarios.ts";
import { measureSideBySide, sideBySideTable } from "./side-by-side.ts";

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
  } finally {
    for (const server of servers) await server.stop();
    await database.server.stop();
  }
}
