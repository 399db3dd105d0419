import { P99_TARGET_MS, RSS_TARGET_MIB } from "./scenarios.ts";
import type { WrkResult } from "./wrk.ts";

/** Where the CPU went during a measured run, in % of one core (so up to 100 x cores in all). */
export interface CpuShare {
  server: number;
  postgres: number;
  generator: number;
  /** Everything else on the machine (other processes sharing it). */
  other: number;
}

export interface Measurement extends WrkResult {
  cpu: CpuShare;
}

export interface BaselineRow extends Measurement {
  name: string;
  /** The bare server's own peak RSS, for comparison with the app's. */
  peakRssMib: number;
}

export interface ScenarioRow extends Measurement {
  name: string;
  method: string;
  path: string;
  /** What one request answered before the load, and what it should answer. */
  probeStatus: number;
  expectedStatus: number;
  baseline: string;
  ratio: number;
  target: number;
  errors: number;
  /** The targets this scenario missed; empty when it passes. */
  missed: string[];
}

/** Marks a measurement during which other processes took a noticeable share of the machine. */
export const NOISY_CPU_PERCENT = 25;

/** Decides PASS or MISS for a scenario against its baseline and the shared targets. */
export function judge(row: Omit<ScenarioRow, "missed" | "errors" | "ratio">, baseline: BaselineRow): ScenarioRow {
  const ratio = row.requestsPerSecond / baseline.requestsPerSecond;
  const errors = row.statusErrors + row.socketErrors;
  const missed: string[] = [];
  if (row.probeStatus !== row.expectedStatus) missed.push(`answered ${row.probeStatus}, expected ${row.expectedStatus}`);
  if (ratio < row.target) missed.push(`ratio < ${row.target}`);
  if (row.p99Ms >= P99_TARGET_MS) missed.push(`p99 >= ${P99_TARGET_MS} ms`);
  if (errors > 0) missed.push("errors");
  return { ...row, ratio, errors, missed };
}

const columns = ["scenario", "req/s", "p50 ms", "p99 ms", "errors", "vs", "ratio", "target", "result", "cpu % srv/pg/wrk/other"];

function cpu(share: CpuShare): string {
  const shares = [share.server, share.postgres, share.generator, share.other].map((value) => Math.round(value)).join("/");
  return share.other > NOISY_CPU_PERCENT ? `${shares} *` : shares;
}

/** The table printed at the end of a run. */
export function table(baselines: Map<string, BaselineRow>, rows: ScenarioRow[], peakRssMib: number): string {
  const labels = [...baselines.keys()];
  const lines: string[][] = [columns];
  for (const [label, row] of baselines) {
    lines.push([`(${labels.indexOf(label) + 1}) ${row.name}`, rate(row), ms(row.p50Ms), ms(row.p99Ms), String(row.statusErrors + row.socketErrors), "", "", "", "", cpu(row.cpu)]);
  }
  for (const row of rows) {
    lines.push([
      row.name, rate(row), ms(row.p50Ms), ms(row.p99Ms), String(row.errors), `(${labels.indexOf(row.baseline) + 1})`,
      `${Math.round(row.ratio * 100)}%`, `>= ${Math.round(row.target * 100)}%`,
      row.missed.length === 0 ? "PASS" : `MISS: ${row.missed.join(", ")}`, cpu(row.cpu),
    ]);
  }
  const widths = columns.map((_, i) => Math.max(...lines.map((line) => line[i].length)));
  const text = lines.map((line) => line.map((cell, i) => (i === 0 || i === 8 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  ").trimEnd());
  text.splice(1, 0, widths.map((width) => "-".repeat(width)).join("  "));
  const bare = [...baselines.values()].map((row) => `${row.peakRssMib.toFixed(1)}`).join(", ");
  const rss = `server peak RSS: ${peakRssMib.toFixed(1)} MiB (target < ${RSS_TARGET_MIB} MiB): ${peakRssMib < RSS_TARGET_MIB ? "PASS" : "MISS"}; baselines: ${bare} MiB`;
  return [
    ...text,
    "",
    `targets for every scenario: p99 < ${P99_TARGET_MS} ms and zero errors (the result column says which hold)`,
    rss,
    `cpu: % of one core used during the measured run by the server under test, Postgres, wrk, and other processes`,
    `*: other processes took more than ${NOISY_CPU_PERCENT}% of a core during that run: its numbers are skewed`,
  ].join("\n");
}

function rate(row: WrkResult): string {
  return Math.round(row.requestsPerSecond).toLocaleString("en-US");
}

function ms(value: number): string {
  return value.toFixed(2);
}
