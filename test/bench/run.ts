/// <reference lib="deno.ns" />
// `npm run bench`: drives the real entry on a throwaway Postgres with wrk, beside two bare
// baselines, in three configurations (configurations.ts), then measures a cold start; prints the
// tables (also written as JSON under test/bench/results/).
// Arguments, optional: parts of scenario names to run only those, e.g. `run.ts 304 legacy`, and
// `--config=memory,redis` to run only those configurations. `--distance` instead counts the round
// trips each kiosk route waits through a delay proxy (distance.ts); `--edits` times staff edits and
// a kiosk_status page as an account's fleet grows (schedule-edits.ts); `--first-start` what npm start
// on an empty DATA_DIR takes to its first 200, to restart, and in memory (first-start.ts); `--against <commit>` measures
// this tree beside that commit's server (against.ts); `--workers[=1,4]` measures the production
// start with one worker beside two, or the counts given (workers.ts); `--seats` what the seat checks
// cost at fleet size (seat-checks.ts); `--metrics` the admin listener's metrics on beside off (metrics-cost.ts).
import { mkdirSync, writeFileSync } from "node:fs";
import { type RunningServer, startServer } from "../support/server.ts";
import { type BaselineServer, startBaseline } from "./baseline-server.ts";
import { cpuSeconds, machineBusySeconds, peakRssMib, postgresPids } from "./cpu.ts";
import { compareAgainst } from "./against.ts";
import { BENCH_USAGE, benchFlags } from "./flags.ts";
import { measureColdStart } from "./cold-start.ts";
import { type Configuration, CONFIGURATIONS, type ConfigurationName, openConfiguration } from "./configurations.ts";
import { benchDatabase, copyDatabase } from "./database.ts";
import { measureDistance } from "./distance.ts";
import { measureScheduleEdits } from "./schedule-edits.ts";
import { measureFirstStart } from "./first-start.ts";
import { compareWorkers } from "./workers.ts";
import { compareMetrics } from "./metrics-cost.ts";
import { measureSeatChecks } from "./seat-checks.ts";
import {
  type BaselineRow,
  coldStartTable,
  configurationTable,
  type ConfiguredRow,
  judge,
  type Measurement,
  NOISY_CPU_PERCENT,
  table,
  together,
} from "./report.ts";
import { probeBody, type Scenario, selectScenarios } from "./scenarios.ts";
import { type Load, type RequestShape, runWrk, WRK_MISSING, wrkInstalled } from "./wrk.ts";

const load: Load = { threads: 2, connections: 50, seconds: 8 };
const WARM_UP_SECONDS = 2;
/** Repeats allowed per bench run, which bounds how long a full run takes. */
const MAX_RETRIES = 3;
/** The app's pool on DATABASE_URL (functions/app/runtime.ts); baseline (2) uses the same. */
const POOL_SIZE = 10;

let flags;
try {
  flags = benchFlags(Deno.args);
} catch (error) {
  // A flag not listed: the reason and the usage, not a stack trace.
  console.error(`${error instanceof Error ? error.message : String(error)}\n${BENCH_USAGE}`);
  Deno.exit(2);
}

if (flags.help) {
  console.log(BENCH_USAGE);
  Deno.exit(0);
}

if (flags.edits) {
  await measureScheduleEdits(flags);
  Deno.exit(0);
}

if (flags["first-start"]) {
  await measureFirstStart(flags.rounds);
  Deno.exit(0);
}

if (flags.against) {
  await compareAgainst(flags.against.split(","), flags);
  Deno.exit(0);
}

if (flags.metrics) {
  await compareMetrics(flags);
  Deno.exit(0);
}

if (flags.workers) {
  await compareWorkers(flags.workers === true ? undefined : flags.workers);
  Deno.exit(0);
}

if (flags.seats) {
  await measureSeatChecks(flags);
  Deno.exit(0);
}

if (flags.distance) {
  await measureDistance(flags);
  Deno.exit(0);
}

if (!(await wrkInstalled())) {
  console.error(WRK_MISSING);
  Deno.exit(1);
}

const configurations = flags.config
  ? flags.config.split(",").map((name) => {
    if (!CONFIGURATIONS.includes(name as ConfigurationName)) throw new Error(`unknown configuration ${name}: ${CONFIGURATIONS.join(", ")}`);
    return name as ConfigurationName;
  })
  : CONFIGURATIONS;
const selected = selectScenarios(flags.scenarios);
const progress = (line: string) => console.error(`bench: ${line}`);

progress("starting Postgres 15 and applying migrations and seed with the Supabase CLI");
const database = await benchDatabase();
const cleanup: Array<() => Promise<void>> = [() => database.server.stop()];
try {
  // Each configuration on its own copy: none reads what another's scenarios wrote.
  const copies = new Map<ConfigurationName, string>();
  for (const name of configurations) copies.set(name, await copyDatabase(database, `bench_${name}`));
  let run = 0;
  let retries = 0;
  /** One measured wrk run, with where the CPU went during it. */
  async function measureOnce(url: string, shape: RequestShape, serverPid: number, count?: () => Promise<number>): Promise<Measurement> {
    const before = { at: performance.now(), server: cpuSeconds(serverPid), postgres: postgresCpu(), machine: machineBusySeconds() };
    const countedBefore = await count?.();
    const result = await runWrk(url, shape, load, ++run);
    const counted = count ? (await count()) - countedBefore! : undefined;
    const seconds = (performance.now() - before.at) / 1000;
    const percent = (cpu: number) => (cpu / seconds) * 100;
    const server = percent(cpuSeconds(serverPid) - before.server);
    const postgres = percent(postgresCpu() - before.postgres);
    const generator = percent(result.generatorCpuSeconds);
    const other = Math.max(0, percent(machineBusySeconds() - before.machine) - server - postgres - generator);
    const commandsPer1000 = counted === undefined ? undefined : (counted / result.requests) * 1000;
    return { ...result, cpu: { server, postgres, generator, other }, commandsPer1000 };
  }
  /**
   * A warm-up run, then the measured one. Other processes on the machine skew a ratio: when they
   * took more than NOISY_CPU_PERCENT of a core, the run is repeated once (within MAX_RETRIES per
   * bench) and the quieter of the two is kept.
   */
  async function measure(url: string, shape: RequestShape, serverPid: number, count?: () => Promise<number>): Promise<Measurement> {
    await runWrk(url, shape, { ...load, seconds: WARM_UP_SECONDS }, ++run);
    const first = await measureOnce(url, shape, serverPid, count);
    if (first.cpu.other <= NOISY_CPU_PERCENT || retries >= MAX_RETRIES) return first;
    retries++;
    progress(`other processes used ${Math.round(first.cpu.other)}% CPU: measuring again`);
    const second = await measureOnce(url, shape, serverPid, count);
    return second.cpu.other < first.cpu.other ? second : first;
  }
  const postgresCpu = () => postgresPids(database.server.port).reduce((sum, pid) => sum + cpuSeconds(pid), 0);

  let probeAddress = 0;
  /** One request as the load will send it (own client address), before the load. */
  async function probe(server: RunningServer, scenario: Scenario, headers: Record<string, string>) {
    const response = await fetch(server.url + scenario.path, {
      method: scenario.method,
      headers: { ...headers, "x-forwarded-for": `192.0.2.${++probeAddress}` },
      // The fleet's first key stands for all of them.
      body: probeBody(scenario),
    });
    return { status: response.status, etag: response.headers.get("etag"), body: await response.text() };
  }

  const baselines = new Map<string, BaselineRow>();
  async function baselineFor(scenario: Scenario, payload: string): Promise<string> {
    const label = scenario.baseline === "fixed-json" ? `fixed JSON, ${new TextEncoder().encode(payload).length} B` : `trivial query, pool ${POOL_SIZE}`;
    if (baselines.has(label)) return label;
    let body: string | undefined;
    let bare: BaselineServer | undefined;
    try {
      if (scenario.baseline === "fixed-json") {
        body = await Deno.makeTempFile({ suffix: ".json" });
        await Deno.writeTextFile(body, payload);
        bare = await startBaseline("fixed-json.ts", [body]);
      } else {
        bare = await startBaseline("trivial-query.ts", [database.url, String(POOL_SIZE)]);
      }
      progress(`baseline: ${label}`);
      const measured = await measure(`${bare.url}/`, { method: "GET" }, bare.pid);
      baselines.set(label, { name: label, ...measured, peakRssMib: peakRssMib(bare.pid) });
    } finally {
      await bare?.stop();
      if (body) await Deno.remove(body);
    }
    return label;
  }

  /** The request a scenario sends to one server (with the ETag it offered, for a 304), and that server's probe. */
  async function prepare(server: RunningServer, scenario: Scenario) {
    const headers = { ...scenario.headers };
    if (scenario.conditional) {
      const etag = (await probe(server, scenario, headers)).etag;
      headers["if-none-match"] = etag ?? '"no-etag-offered"';
    }
    const answer = await probe(server, scenario, headers);
    const label = await baselineFor(scenario, answer.body);
    progress(`${scenario.name}: ${scenario.method} ${scenario.path} (probe answered ${answer.status})`);
    return { answer, label, shape: { method: scenario.method, headers, body: scenario.body, fleet: scenario.fleet, path: scenario.fleetPath } };
  }

  // Every configuration's server runs at once (an idle one costs nothing) and each scenario is
  // measured on all of them back to back, twice, in palindrome order (memory, redis, pooler,
  // pooler, redis, memory): a ratio compares runs seconds apart, and each configuration's two runs
  // sit at the same mean position. This machine's speed drifted by a fifth from one minute to the
  // next, and the first of several runs in a row was often the fastest (the same catalogue read,
  // no limit on it, measured 83% on the second and third server of one pass).
  const configured: ConfiguredRow[] = [];
  const peaks = new Map<ConfigurationName, number>();
  const running: Array<{ name: ConfigurationName; configuration: Configuration; server?: RunningServer }> = [];
  try {
    for (const name of configurations) {
      const configuration = await openConfiguration(name, copies.get(name)!, database.server.port);
      const entry: (typeof running)[number] = { name, configuration };
      running.push(entry);
      entry.server = await startServer(configuration.env);
      progress(`configuration ${name}: server listening at ${entry.server.url} (pid ${entry.server.pid})`);
    }
    for (const scenario of selected) {
      const prepared = new Map<ConfigurationName, Awaited<ReturnType<typeof prepare>>>();
      const runs = new Map<ConfigurationName, Measurement[]>();
      for (const { name, configuration, server } of [...running, ...running.toReversed()]) {
        if (!prepared.has(name)) prepared.set(name, await prepare(server!, scenario));
        const { shape } = prepared.get(name)!;
        const measured = await measure(server!.url + scenario.path, shape, server!.pid, configuration.redisCommands);
        runs.set(name, [...(runs.get(name) ?? []), measured]);
        // Which scenario raised the server's peak, should it pass the target.
        progress(`${name}, ${scenario.name}: ${Math.round(measured.requestsPerSecond)} req/s; server peak RSS so far ${peakRssMib(server!.pid).toFixed(1)} MiB`);
      }
      for (const { name } of running) {
        const { answer, label } = prepared.get(name)!;
        const [first, second] = runs.get(name)!;
        configured.push({
          configuration: name,
          ...judge({
            name: scenario.name, method: scenario.method, path: scenario.path, probeStatus: answer.status, expectedStatus: scenario.status,
            baseline: label, target: scenario.target, ...together(first, second),
          }, baselines.get(label)!),
        });
      }
    }
    for (const { name, server } of running) peaks.set(name, peakRssMib(server!.pid));
  } finally {
    for (const { configuration, server } of running) {
      await server?.stop();
      await configuration.stop();
    }
  }

  progress("cold start: importing the edge path, and the entry's first answer on SUPABASE_DB_URL beside a bare Deno.serve");
  const coldPooler = await openConfiguration("pooler", database.url, database.server.port);
  let coldStart;
  try {
    coldStart = await measureColdStart(coldPooler.env.SUPABASE_DB_URL);
  } finally {
    await coldPooler.stop();
  }

  const first = configurations[0];
  const rows = configured.filter((row) => row.configuration === first);
  const rss = Math.max(...peaks.values());
  console.log(`configuration ${first}, against the baselines:`);
  console.log(table(baselines, rows, rss));
  if (configurations.length > 1) {
    console.log("");
    console.log(configurationTable(configured, configurations, peaks));
  }
  console.log("");
  console.log(coldStartTable(coldStart));

  const results = new URL("results/", import.meta.url);
  mkdirSync(results, { recursive: true });
  const file = new URL(`${new Date().toISOString().replace(/[:.]/g, "-")}.json`, results);
  writeFileSync(file, JSON.stringify({
    finishedAt: new Date().toISOString(),
    machine: { cores: navigator.hardwareConcurrency, loadAverage: Deno.loadavg() },
    load: { ...load, warmUpSeconds: WARM_UP_SECONDS },
    baselines: [...baselines.values()],
    scenarios: configured,
    server: { peakRssMib: Object.fromEntries(peaks) },
    coldStart,
  }, null, 2));
  progress(`results written to ${file.pathname}`);
} finally {
  for (const step of cleanup) await step();
}
