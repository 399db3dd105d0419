/// <reference lib="deno.ns" />
// `npm run bench -- --workers[=1,4]`: the production start (`npm run start:workers`, a process per
// worker) behind the shipped HAProxy, which spreads the requests among them, with one worker beside
// two (or the counts given), in one run, on the routes that read the database. All keep their
// limits in one redis-server, as several workers must (functions/app/shared-by-workers.ts). The
// server CPU is the workers'; HAProxy's (TLS included) is counted as the machine's other load.
import { type RunningProxy, startProxy } from "../support/haproxy.ts";
import { startRedis } from "../support/redis.ts";
import { freePortRange, type RunningServer, startServer } from "../support/server.ts";
import { benchDatabase, copyDatabase } from "./database.ts";
import { scenarios } from "./scenarios.ts";
import { measureSideBySide, sideBySideTable } from "./side-by-side.ts";

/** The scenarios whose answer is read from the database on every request. */
const DATABASE_READS = ["proclamations (entitled)", "license schedule 200", "license schedule 304", "legacy schedule"];

/**
 * Measures each worker count (1 and 2 unless given) beside the others and prints the table.
 *
 * @example
 * await compareWorkers([1, 4]);
 */
export async function compareWorkers(counts = [1, 2]): Promise<void> {
  const progress = (line: string) => console.error(`bench: ${line}`);
  progress("starting Postgres 15 and applying migrations and seed with the Supabase CLI");
  const database = await benchDatabase();
  const redis = await startRedis();
  const servers: RunningServer[] = [];
  const proxies: RunningProxy[] = [];
  try {
    const sides = [];
    for (const workers of counts) {
      // A database each: neither reads what the other's requests wrote (sightings).
      const url = await copyDatabase(database, `bench_workers_${workers}`);
      // The proxy passes wrk's X-Forwarded-For on; the workers believe it from loopback (TRUST_PROXY).
      // Ports of their own, which the proxy follows (PORT + i - 1, ADMIN_PORT + i - 1).
      const settings = { PORT: String(await freePortRange(workers)), ADMIN_PORT: String(await freePortRange(workers)), DENO_JOBS: String(workers) };
      const server = await startServer(
        { DATABASE_URL: url, REDIS_URL: redis.url, TRUST_PROXY: "true", ...settings },
        undefined,
        { startScript: true, script: "start:workers" },
      );
      servers.push(server);
      const proxy = await startProxy(settings, 20_000);
      proxies.push(proxy);
      progress(`${workers} worker(s) behind HAProxy at ${proxy.url}`);
      const client = Deno.createHttpClient({ caCerts: [proxy.certificate] });
      sides.push({
        label: `${workers} worker${workers > 1 ? "s" : ""}`,
        server: { url: `https://localhost:${proxy.port}`, pid: server.pid },
        cpuPids: () => server.workers!.map((worker) => worker.pid),
        fetch: ((input, init) => fetch(input, { ...init, client })) as typeof fetch,
      });
    }
    const rows = await measureSideBySide(sides, scenarios.filter((s) => DATABASE_READS.includes(s.name)), progress);
    console.log(`\nnpm run start:workers behind HAProxy (TLS) on ${navigator.hardwareConcurrency} cores, limits in Redis, Postgres direct: requests/s, mean of two interleaved runs each (wrk -t2 -c50, 8 s)`);
    console.log(sideBySideTable(rows, sides.map((side) => side.label)));
  } finally {
    for (const proxy of proxies) await proxy.stop();
    for (const server of servers) await server.stop();
    await redis.stop();
    await database.server.stop();
  }
}
