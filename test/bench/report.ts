import type { ColdStart } from "./cold-start.ts";
import { COMPARED, type ConfigurationName } from "./configurations.ts";
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
  /** Rate-limit store commands per 1,000 requests, where the store counts them (Redis). */
  commandsPer1000?: number;
}

/** Runs of one scenario as one: rates, latencies and CPU shares averaged, p99 and max the worst, every error counted. */
export function together(...runs: Measurement[]): Measurement {
  const mean = (pick: (m: Measurement) => number) => runs.reduce((sum, m) => sum + pick(m), 0) / runs.length;
  const sum = (pick: (m: Measurement) => number) => runs.reduce((total, m) => total + pick(m), 0);
  const worst = (pick: (m: Measurement) => number) => Math.max(...runs.map(pick));
  return {
    requests: sum((m) => m.requests),
    requestsPerSecond: mean((m) => m.requestsPerSecond),
    p50Ms: mean((m) => m.p50Ms),
    p99Ms: worst((m) => m.p99Ms),
    maxMs: worst((m) => m.maxMs),
    statusErrors: sum((m) => m.statusErrors),
    socketErrors: sum((m) => m.socketErrors),
    bytesPerResponse: mean((m) => m.bytesPerResponse),
    generatorCpuSeconds: sum((m) => m.generatorCpuSeconds),
    cpu: {
      server: mean((m) => m.cpu.server),
      postgres: mean((m) => m.cpu.postgres),
      generator: mean((m) => m.cpu.generator),
      other: mean((m) => m.cpu.other),
    },
    commandsPer1000: runs.some((m) => m.commandsPer1000 === undefined) ? undefined : mean((m) => m.commandsPer1000!),
  };
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

/** A scenario's row, with the configuration it ran in. */
export type ConfiguredRow = ScenarioRow & { configuration: ConfigurationName };

/**
 * One line per scenario, one column group per configuration: requests/s and p99, and for a
 * configuration compared with another (COMPARED), its share of that one's throughput, PASS or MISS.
 */
export function configurationTable(rows: ConfiguredRow[], configurations: ConfigurationName[], peaks: Map<ConfigurationName, number>): string {
  const of = (name: ConfigurationName, scenario: string) => rows.find((row) => row.configuration === name && row.name === scenario);
  const header = ["scenario", ...configurations.map((name) => {
    const compared = COMPARED[name];
    const against = compared && configurations.includes(compared.against)
      ? ` (vs ${compared.against} >= ${Math.round(compared.target * 100)}%${compared.p99Ms ? `, p99 < ${compared.p99Ms} ms` : ""})`
      : "";
    return `${name}: req/s, p99 ms${name === "redis" ? ", cmds/1000 req" : ""}${against}`;
  })];
  const lines: string[][] = [header];
  for (const scenario of [...new Set(rows.map((row) => row.name))]) {
    lines.push([scenario, ...configurations.map((name) => {
      const row = of(name, scenario);
      if (!row) return "";
      const cells = [rate(row), ms(row.p99Ms)];
      if (row.commandsPer1000 !== undefined) cells.push(row.commandsPer1000.toFixed(0));
      if (row.errors > 0) cells.push(`${row.errors} errors`);
      const compared = COMPARED[name];
      const base = compared && of(compared.against, scenario);
      if (compared && base) {
        const ratio = row.requestsPerSecond / base.requestsPerSecond;
        const held = ratio >= compared.target && (compared.p99Ms === undefined || row.p99Ms < compared.p99Ms) && row.errors === 0;
        cells.push(`${Math.round(ratio * 100)}% ${held ? "PASS" : "MISS"}`);
      }
      return cells.join("  ");
    })]);
  }
  const widths = header.map((_, i) => Math.max(...lines.map((line) => line[i].length)));
  const text = lines.map((line) => line.map((cell, i) => cell.padEnd(widths[i])).join("  |  ").trimEnd());
  text.splice(1, 0, widths.map((width) => "-".repeat(width)).join("--+--"));
  const rss = configurations.map((name) => `${name} ${peaks.get(name)?.toFixed(1) ?? "?"} MiB`).join(", ");
  return [...text, "", `server peak RSS per configuration: ${rss}`].join("\n");
}

/** The cold start: import time of the edge path, and process start to first answer beside a bare Deno.serve. */
export function coldStartTable(cold: ColdStart): string {
  return [
    "cold start (median of 5 fresh processes)",
    `  importing what the edge path loads (functions/app/app.ts + runtime.ts): ${cold.importMs.toFixed(0)} ms (target <= 150 ms): ${cold.importMs <= 150 ? "PASS" : "MISS"}`,
    `  process start to first answer, the entry on SUPABASE_DB_URL (through PgBouncer): ${cold.firstAnswerMs.toFixed(0)} ms`,
    `  process start to first answer, a bare Deno.serve: ${cold.bareFirstAnswerMs.toFixed(0)} ms`,
  ].join("\n");
}

function rate(row: WrkResult): string {
  return Math.round(row.requestsPerSecond).toLocaleString("en-US");
}

function ms(value: number): string {
  return value.toFixed(2);
}
