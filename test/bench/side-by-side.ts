/// <reference lib="deno.ns" />
// Servers measured beside each other in one run: each scenario on every server back to back, twice,
// in palindrome order (A, B, C, C, B, A), so each ratio compares runs seconds apart at the same mean
// position. `--against <commit>` (against.ts) and `--workers` (workers.ts) are built on it.
// On two cores wrk and the server share the machine, and one pair of runs of a route that touches no
// database swings by up to 10 % (measured: 48-57k req/s for one server over six runs); `--rounds N`
// repeats the palindrome N times, and the server CPU per request is printed beside the rate, a figure
// wrk's share of the machine does not move.
import type { RunningServer } from "../support/server.ts";
import { cpuSeconds, machineBusySeconds } from "./cpu.ts";
import { type Measurement, together } from "./report.ts";
import { probeBody, type Scenario } from "./scenarios.ts";
import { type Load, runWrk } from "./wrk.ts";

export const LOAD: Load = { threads: 2, connections: 50, seconds: 8 };
const WARM_UP_SECONDS = 2;

export interface Side {
  label: string;
  /** What wrk drives: the server itself, or a proxy in front of it (then `url` is the proxy's). */
  server: Pick<RunningServer, "url" | "pid">;
  /** Scenarios this side cannot run (the bench's 1,000 keys exist only in its Postgres). */
  skips?: (scenario: Scenario) => boolean;
  /** The processes whose CPU is the server's: `server.pid` unless given (the workers of `npm run start:workers`). */
  cpuPids?: () => number[];
  /** How the probes reach `server.url`: a client trusting the proxy's self-signed certificate; `fetch` unless given. */
  fetch?: typeof fetch;
}

export interface SideRow {
  scenario: string;
  bySide: Map<string, Measurement>;
}

let run = 0;
let probeAddress = 0;

/** The request a scenario sends to one server: with the ETag that server offered, for a 304. */
async function requestFor(side: Side, scenario: Scenario) {
  const { server } = side;
  const fetch = side.fetch ?? globalThis.fetch;
  const headers = { ...scenario.headers };
  if (scenario.conditional) {
    const response = await fetch(server.url + scenario.path, { headers: { ...headers, "x-forwarded-for": `198.51.100.${++probeAddress % 250}` } });
    await response.body?.cancel();
    headers["if-none-match"] = response.headers.get("etag") ?? '"no-etag-offered"';
  }
  const probe = await fetch(server.url + scenario.path, {
    method: scenario.method,
    headers: { ...headers, "x-forwarded-for": `198.51.100.${++probeAddress % 250}` },
    body: probeBody(scenario),
  });
  await probe.body?.cancel();
  if (probe.status !== scenario.status) throw new Error(`${scenario.name} answered ${probe.status} at ${server.url}, not ${scenario.status}`);
  return { method: scenario.method, headers, body: scenario.body, fleet: scenario.fleet, path: scenario.fleetPath };
}

async function measure(side: Side, scenario: Scenario, shape: Awaited<ReturnType<typeof requestFor>>): Promise<Measurement> {
  await runWrk(side.server.url + scenario.path, shape, { ...LOAD, seconds: WARM_UP_SECONDS }, (++run % 255) + 1);
  const serverCpu = () => (side.cpuPids?.() ?? [side.server.pid]).reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  const before = { at: performance.now(), server: serverCpu(), machine: machineBusySeconds() };
  const result = await runWrk(side.server.url + scenario.path, shape, LOAD, (++run % 255) + 1);
  const seconds = (performance.now() - before.at) / 1000;
  const percent = (cpu: number) => (cpu / seconds) * 100;
  const server = percent(serverCpu() - before.server);
  const generator = percent(result.generatorCpuSeconds);
  const other = Math.max(0, percent(machineBusySeconds() - before.machine) - server - generator);
  return { ...result, cpu: { server, postgres: 0, generator, other } };
}

/** Server CPU microseconds per answered request. */
export function serverMicrosecondsPerRequest(m: Measurement): number {
  return (m.cpu.server / 100 / m.requestsPerSecond) * 1e6;
}

/**
 * Measures every scenario on every side, in `rounds` palindromes, and returns each side's mean of its runs.
 *
 * @example
 * const rows = await measureSideBySide([{ label: "tree", server }, { label: "327ebed", server: old }], scenarios, console.error);
 */
export async function measureSideBySide(sides: Side[], scenarios: Scenario[], progress: (line: string) => void, rounds = 1): Promise<SideRow[]> {
  const rows: SideRow[] = [];
  for (const scenario of scenarios) {
    const shapes = new Map<string, Awaited<ReturnType<typeof requestFor>>>();
    const runs = new Map<string, Measurement[]>();
    const taking = sides.filter((side) => !side.skips?.(scenario));
    const palindrome = [...taking, ...taking.toReversed()];
    for (const side of Array.from({ length: rounds }, () => palindrome).flat()) {
      if (!shapes.has(side.label)) shapes.set(side.label, await requestFor(side, scenario));
      const measured = await measure(side, scenario, shapes.get(side.label)!);
      runs.set(side.label, [...(runs.get(side.label) ?? []), measured]);
      progress(`${scenario.name}, ${side.label}: ${Math.round(measured.requestsPerSecond)} req/s, p99 ${measured.p99Ms.toFixed(1)} ms`);
    }
    const bySide = new Map<string, Measurement>();
    for (const [label, measured] of runs) bySide.set(label, together(...measured));
    rows.push({ scenario: scenario.name, bySide });
  }
  return rows;
}

/**
 * A Markdown table: each scenario's requests/s, server CPU µs per request and p99 on each side, and
 * each side's ratio to the first; errors (status >= 400 or socket errors) are counted beside the figure.
 */
export function sideBySideTable(rows: SideRow[], labels: string[]): string {
  const [first, ...others] = labels;
  const head = [
    "route",
    ...labels.map((label) => `${label} req/s`),
    ...others.map((label) => `${label} / ${first}`),
    ...labels.map((label) => `server µs/request ${label}`),
    ...labels.map((label) => `p99 ms ${label}`),
  ];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const row of rows) {
    const cell = (label: string) => {
      const m = row.bySide.get(label);
      if (!m) return "-";
      const errors = m.statusErrors + m.socketErrors;
      return `${Math.round(m.requestsPerSecond).toLocaleString("en")}${errors > 0 ? ` (${errors} errors)` : ""}`;
    };
    const ratio = (label: string) => {
      const a = row.bySide.get(label);
      const b = row.bySide.get(first);
      return a && b ? (a.requestsPerSecond / b.requestsPerSecond).toFixed(2) : "-";
    };
    const perRequest = (label: string) => {
      const m = row.bySide.get(label);
      return m ? serverMicrosecondsPerRequest(m).toFixed(1) : "-";
    };
    const p99 = (label: string) => row.bySide.get(label)?.p99Ms.toFixed(1) ?? "-";
    lines.push(`| ${[row.scenario, ...labels.map(cell), ...others.map(ratio), ...labels.map(perRequest), ...labels.map(p99)].join(" | ")} |`);
  }
  return lines.join("\n");
}
