/// <reference lib="deno.ns" />
import { startServer } from "../support/server.ts";
import type { BenchFlags } from "./flags.ts";
import { type Load, type RequestShape, runWrk, type WrkResult } from "./wrk.ts";

/** The share of its throughput the API keeps with a psql session attached (issue: within 5 %). */
export const SQL_PORT_TARGET = 0.95;

const shapes: Array<{ name: string; path: string; shape: RequestShape }> = [
  { name: "GET schedule by key (200)", path: "/api/v2/licenses/DEMO-0000-0000-0001/schedule", shape: { method: "GET" } },
  { name: "GET frequencies", path: "/api/v2/frequencies", shape: { method: "GET" } },
];

type Attached = "none" | "idle" | "paging";
/** Palindrome order, so a drift of the machine weighs on each state alike. */
const ORDER: Attached[] = ["none", "idle", "paging", "paging", "idle", "none"];

/**
 * `npm run bench -- --sql-port [--seconds=N]`: `npm start`'s default, the entry on PGlite, driven
 * by wrk with no psql session on its SQL port (db/sql-port.ts), with one attached and idle, and
 * with one reading a kiosk_status page once a second, as staff watching their fleet would.
 */
export async function measureSqlPort(flags: Pick<BenchFlags, "seconds">): Promise<void> {
  const seconds = flags.seconds ?? 8;
  const load: Load = { threads: 2, connections: 50, seconds };
  const progress = (line: string) => console.error(`bench sql-port: ${line}`);
  const dataDir = Deno.makeTempDirSync({ prefix: "cadence-bench-pglite-" });
  progress("starting the entry on PGlite (migrating and seeding a fresh directory)");
  // wrk sends every request from its own X-Forwarded-For: the limiter runs on each, never refusing one.
  const server = await startServer({ DATA_DIR: dataDir, TRUST_PROXY: "true" });
  let run = 0;
  try {
    const rows: string[] = [];
    for (const { name, path, shape } of shapes) {
      await runWrk(server.url + path, shape, { ...load, seconds: 2 }, ++run);
      const results: Record<Attached, WrkResult[]> = { none: [], idle: [], paging: [] };
      for (const attached of ORDER) {
        const psql = attached === "none" ? undefined : attachPsql(server.sqlPort!, attached === "paging");
        try {
          results[attached].push(await runWrk(server.url + path, shape, load, ++run));
        } finally {
          await psql?.detach();
        }
      }
      const rate = (state: Attached) => results[state].reduce((sum, r) => sum + r.requests, 0) / (results[state].length * seconds);
      const ratio = (state: Attached) => {
        const value = rate(state) / rate("none");
        return `${value.toFixed(3)}${value < SQL_PORT_TARGET ? ", missed" : ""}`;
      };
      const p99 = (state: Attached) => Math.max(...results[state].map((r) => r.p99Ms)).toFixed(1);
      const errors = Object.values(results).flat().reduce((sum, r) => sum + r.statusErrors + r.socketErrors, 0);
      rows.push(
        `| ${name} | ${Math.round(rate("none"))} | ${Math.round(rate("idle"))} (${ratio("idle")}) | ${Math.round(rate("paging"))} (${ratio("paging")}) | ${p99("none")} / ${p99("idle")} / ${p99("paging")} | ${errors} |`,
      );
    }
    console.log(`PGlite, ${load.connections} connections, ${seconds} s per run, twice each; target ${SQL_PORT_TARGET} of the rate without psql\n`);
    console.log("| scenario | req/s, no psql | req/s, psql idle (ratio) | req/s, psql paging kiosk_status (ratio) | p99 ms none / idle / paging | errors |");
    console.log("|---|---|---|---|---|---|");
    for (const row of rows) console.log(row);
  } finally {
    await server.stop();
    Deno.removeSync(dataDir, { recursive: true });
  }
}

/** A psql session on the SQL port, idle or reading a kiosk_status page once a second, until detached. */
function attachPsql(port: number, paging: boolean) {
  const child = new Deno.Command("psql", {
    args: ["-X", "-q", "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "postgres"],
    env: { PGPASSWORD: "postgres" },
    stdin: "piped",
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  const query = new TextEncoder().encode("select * from public.kiosk_status order by license_key limit 100;\n");
  const timer = paging ? setInterval(() => void writer.write(query), 1000) : undefined;
  void writer.write(paging ? query : new TextEncoder().encode("select 1;\n"));
  return {
    async detach() {
      clearInterval(timer);
      await writer.write(new TextEncoder().encode("\\q\n"));
      await writer.close();
      await child.status;
    },
  };
}
