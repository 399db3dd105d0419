// `npm run simulate`: a fleet of kiosks against the production configuration (production.ts),
// while staff edit schedules and, with --faults, the database and Redis fail; prints the summary
// (summary.ts) and exits 1 when anything unexpected happened. `--cost-for N --summary FILE`
// instead estimates the monthly cost of N kiosks from a summary (cost.ts). `--help` lists the options.
import { readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import process from "node:process";
import { openPostgres } from "../../functions/app/db/postgres.ts";
import { machineBusySeconds } from "../bench/cpu.ts";
import { migratedDatabase } from "../bench/database.ts";
import { ChangeLedger } from "./change-ledger.ts";
import { type CorpusOptions, type CostOptions, parseOptions, type RunOptions, USAGE } from "./options.ts";
import { costProfiles } from "./cost.ts";
import { openEventReceiving } from "./event-receiving.ts";
import { DarkLedger, darkWindow, judgeAlerts, prepareAlerts, runPasses, zoneForTenOClock } from "./dark-kiosks.ts";
import { injectFaults } from "./faults.ts";
import { loopDelayMs, serverDurations } from "./server-metrics.ts";
import { openGateway } from "./gateway.ts";
import { insertFleet, layoutFleet, registerVenues } from "./fleet.ts";
import { runKiosk } from "./kiosk.ts";
import { meters as openMeters, type Reading } from "./meters.ts";
import { startProduction } from "./production.ts";
import { corpusHolds, corpusMatrix, playCorpus } from "./seat-corpus.ts";
import { SEAT_PATTERNS } from "./seat-patterns.ts";
import { insertPatternKeys, judgeReplay, replayPatterns } from "./seat-replay.ts";
import { judgeSeats, planSeats } from "./seats.ts";
import { countStatementsFromHere, STATEMENT_SETTINGS, writeCostliestStatements } from "./statements.ts";
import { fleetSchedules, staffAtWork } from "./staff.ts";
import { type Minute, Summary } from "./summary.ts";
import { Tally } from "./tally.ts";

const log = (line: string) => console.error(`simulate: ${line}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
/** How often the connections are counted. */
const CONNECTIONS_EVERY_MS = 2_000;
/** The CPU is read at each minute of the run. */
const MINUTE_MS = 60_000;

/** CPU seconds this process (the simulator) has used so far. */
const simulatorCpuSeconds = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

/** Requests the server shed as back-pressure, as its `database_busy` lines count them (each counts those since the last). */
function shedInLogs(logs: string): number {
  return [...logs.matchAll(/"event":"database_busy".*?"shed":(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
}

/** `--cost-for N`: every profile at N kiosks, cheapest first, as a table and as JSON. */
function estimate(options: CostOptions) {
  const summary = Summary.parse(JSON.parse(readFileSync(options.summary, "utf8")));
  const { load, profiles } = costProfiles(options.costFor, summary.perKioskDay, options);
  const usd = (n: number) => `$${n.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  const lines = [
    `${options.costFor.toLocaleString("en-US")} kiosks, from ${options.summary} (${summary.kiosks} kiosks, ${summary.minutes} min, poll ${summary.pollSeconds} s):`,
    `  ${(load.requests / 1e6).toFixed(1)} million requests, ${(load.redisCommands / 1e6).toFixed(1)} million Redis commands (${Math.round(load.commandsPerSecond)}/s mean), ` +
    `${load.redisGb.toFixed(1)} GB Redis traffic, ${load.answerGb.toFixed(1)} GB answers, ${load.databaseCores.toFixed(2)} database cores, ${load.serverCores.toFixed(2)} server cores a month`,
    "",
    "| profile | per month | per kiosk-month | limits exceeded |",
    "|---|---|---|---|",
    ...profiles.map((p) => `| ${p.name} | ${usd(p.total)} | $${p.perKioskMonth.toFixed(4)} | ${p.exceeds.join("; ") || "none"} |`),
    "",
  ];
  const holds = profiles.filter((p) => p.exceeds.length === 0);
  lines.push(`cheapest: ${holds[0]?.name ?? "none within its limits"}; cheapest on Supabase Edge Functions: ${holds.find((p) => p.onEdgeFunctions)?.name ?? "none within its limits"}`);
  for (const p of profiles.filter((p) => p.exceeds.length > 0)) lines.push(`on paper only: ${p.name}: ${p.exceeds.join("; ")}`);
  console.error(lines.join("\n"));
  console.log(JSON.stringify({ load, profiles }, null, 2));
}

/**
 * `--seat-corpus`: every pattern of the seat checks' corpus for `hours` on a fast clock, against a
 * fresh migrated Postgres; prints the confusion matrix (stderr) and the verdicts (JSON); exits 1
 * when an honest pattern was flagged or a copy the docs do not name was missed.
 */
async function corpus(options: CorpusOptions): Promise<number> {
  log(`starting Postgres 15 (migrated by the Supabase CLI); ${SEAT_PATTERNS.length} patterns for ${options.hours} hours through ${options.instances} instances`);
  const database = await migratedDatabase();
  const db = openPostgres(database.url, { max: 2, deadlineMs: 30_000 });
  try {
    const began = performance.now();
    const verdicts = await playCorpus({
      db, accountEmail: "demo@example.com", prefix: "CRPS-0001", patterns: SEAT_PATTERNS, startAt: Date.now(), runMs: options.hours * 3_600_000,
      instances: options.instances, seed: options.seed, log: () => {},
      progress: (hours) => log(`${hours} of ${options.hours} hours played, ${Math.round((performance.now() - began) / 1000)} s`),
    });
    console.error(corpusMatrix(verdicts));
    const text = JSON.stringify({ hours: options.hours, instances: options.instances, seed: options.seed, verdicts }, null, 2);
    console.log(text);
    if (options.json) writeFileSync(options.json, text + "\n");
    return corpusHolds(verdicts) ? 0 : 1;
  } finally {
    await db.close();
    await database.server.stop();
  }
}

async function simulate(options: RunOptions): Promise<number> {
  const pollMs = options.pollSeconds * 1000;
  const runMs = options.minutes * 60_000;
  const notes: string[] = [];
  // Kiosks boot over the first poll interval; a run no longer than that boots them over its first half
  // and measures from its start, boot included.
  const bootMs = runMs > pollMs ? pollMs : runMs / 2;
  if (runMs <= pollMs) {
    notes.push(`the run (${runMs / 1000} s) is no longer than one poll interval (${options.pollSeconds} s): kiosks booted over its first half, and the per-kiosk-day rates include their boot (license, system name, first read), so they overstate a steady day`);
  }
  const passMs = options.passSeconds * 1000;
  const offlineMs = options.offlineSeconds * 1000;
  const window = darkWindow({ pollMs, passMs, offlineMs, runMs });
  if (!window && options.darkShare > 0) log("the run is too short for a dark window (threshold, two passes and two poll intervals): no kiosk goes dark");
  const { fleet, copies } = planSeats(layoutFleet(options.kiosks, options.perAddress, options.legacyShare, window ? options.darkShare : 0), options, runMs, bootMs);
  const zone = zoneForTenOClock();
  log(`starting Postgres 15 (migrated by the Supabase CLI) with ${fleet.length} kiosks, PgBouncer, redis-server and the entry`);
  let registeredVenues = 0;
  const production = await startProduction(async (sql) => {
    await insertFleet(sql, fleet);
    await prepareAlerts(sql, zone, options.offlineSeconds);
    if (options.registerVenues) registeredVenues = await registerVenues(sql, fleet);
    if (options.seatPatterns) log(`${await insertPatternKeys(sql)} keys call as the seat checks' ${SEAT_PATTERNS.length} patterns do`);
    if (options.statements) await countStatementsFromHere(sql);
  }, options.statements ? STATEMENT_SETTINGS : {});
  if (options.registerVenues) log(`registered ${registeredVenues} venue addresses for their kiosks`);
  const receiving = options.events ? await openEventReceiving(production.sql) : undefined;
  if (receiving) log("an endpoint receives every event the run records");
  // Ended from outside (Ctrl-C, a test past its deadline): stop what it started, then exit, so no
  // Postgres, PgBouncer, redis-server or entry outlives the run.
  const ended = () => void production.stop().finally(() => Deno.exit(143));
  for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, ended);
  try {
    const schedules = await fleetSchedules(production.sql);
    const meters = openMeters({
      poolerPort: production.pooler.port,
      database: production.databaseName,
      postgresPort: production.database.port,
      redisPort: production.redisPort,
      serverPids: production.serverPids,
    });
    const tally = new Tally();
    const ledger = new ChangeLedger(2 * pollMs);
    const started = performance.now();
    const startedAt = Date.now();
    log(`run starts at ${new Date().toISOString().slice(11, 19)} UTC`);
    const now = () => performance.now() - started;
    // CPU per minute of the run, each part apart: the server's, the simulator's, the database's, the machine's.
    const cpuAt = async () => {
      const reading = await meters.read();
      return { at: now(), server: reading.serverCpuSeconds, simulator: simulatorCpuSeconds(), database: reading.databaseCpuSeconds, machine: machineBusySeconds() };
    };
    const cpuReadings = [await cpuAt()];
    const cpuSampled = (async () => {
      for (let minute = 1; minute * MINUTE_MS < runMs + MINUTE_MS; minute++) {
        await sleep(Math.min(minute * MINUTE_MS, runMs) - now());
        cpuReadings.push(await cpuAt().catch(() => cpuReadings[cpuReadings.length - 1]));
      }
    })();

    const darkLedger = new DarkLedger();
    const gateway = openGateway(options.connections);
    // Convergence: when the last kiosk booted (validated, named, served its first schedule), and the
    // CPU used until then, read at that moment.
    const booting = { expected: fleet.length + copies.length, booted: 0, at: null as number | null, cpu: undefined as Promise<Awaited<ReturnType<typeof cpuAt>>> | undefined };
    const context = {
      baseUrl: production.server.url, pollMs, jitter: options.jitter, timeoutMs: options.timeoutSeconds * 1000, gateway, now, endAt: runMs, tally, ledger,
      dark: window && { window, ledger: darkLedger },
      booted() {
        booting.booted++;
        if (booting.booted < booting.expected) return;
        booting.at = now();
        booting.cpu = cpuAt();
      },
    };
    // How late the simulator's own event loop runs a 100 ms timer, the most in each minute: the part
    // of a kiosk's measured wait that is the simulator's, not the server's.
    const simulatorLag: number[] = [];
    let lagExpected = performance.now() + 100;
    const lagTimer = setInterval(() => {
      const at = performance.now();
      const minute = Math.floor(now() / MINUTE_MS);
      simulatorLag[minute] = Math.max(simulatorLag[minute] ?? 0, at - lagExpected);
      lagExpected = at + 100;
    }, 100);
    // The server's own: its event loop's delay, read from its metrics every CONNECTIONS_EVERY_MS.
    const serverLag: number[] = [];
    const scrape = () => fetch(`${production.server.adminUrl}/metrics`).then((response) => response.text());
    if (window && options.perAddress.high * (60 / options.pollSeconds) > 10) {
      // A kiosk refused (429) sends no sighting: one starved of answers for the threshold looks dark.
      log(`venues of up to ${options.perAddress.high} kiosks polling every ${options.pollSeconds} s exceed 10 calls a minute per address: rate-limited kiosks may be reported dark (supabase/README.md, kiosks per venue address)`);
    }
    if (window) {
      log(`${fleet.filter((kiosk) => kiosk.dark).length} kiosks go dark from ${window.from / 1000} s to ${window.until / 1000} s; venues in ${zone}, offline after ${options.offlineSeconds} s, a scheduled run every ${options.passSeconds} s`);
    }
    // The scheduled run (offline alerts, then the outbox), as pg_cron calls the `outbox` function.
    const passes = runPasses(production.pooler.through(production.url), passMs, now, runMs);
    log(`${fleet.length} kiosks boot over the first ${bootMs / 1000} s, then poll for ${options.minutes} min in all`);
    // Kiosks boot spread over the first poll interval, so their polls are spread over every one after.
    const kiosks = fleet.map((kiosk) => runKiosk(kiosk, Math.random() * bootMs, context));
    if (copies.length > 0) log(`${copies.length} keys get a second kiosk on a network of its own, started between ${Math.round(bootMs / 1000)} s and half the run`);
    const copyRuns = copies.map((copy) => runKiosk(copy.kiosk, copy.bootAt, context));
    const replayed = options.seatPatterns ? replayPatterns(() => context.baseUrl, runMs, now) : Promise.resolve(undefined);
    let workerStarts = 1;
    const workers = options.workerLife ? workerLives(options.workerLife * 1000) : Promise.resolve();
    /** Supabase's runtime: each worker lives `lifeMs`, then a new one (empty caches, new pool) takes the requests. */
    async function workerLives(lifeMs: number) {
      for (let at = lifeMs; at < runMs; at += lifeMs) {
        await sleep(at - now());
        if (now() >= runMs) break;
        const previous = await production.nextWorker();
        context.baseUrl = production.server.url;
        workerStarts++;
        // Requests already sent to the previous worker finish there; then it stops, writing what it holds.
        await sleep(Math.min(context.timeoutMs, 2_000));
        meters.bankServer(previous.pid);
        await production.retire(previous);
      }
    }

    const peak = { toPooler: 0, toDatabase: 0 };
    let counting = true;
    const counted = (async () => {
      while (counting) {
        // A count that failed is skipped; the next one comes 2 s later.
        const current = await meters.connections().catch(() => peak);
        peak.toPooler = Math.max(peak.toPooler, current.toPooler);
        peak.toDatabase = Math.max(peak.toDatabase, current.toDatabase);
        const lag = await scrape().then(loopDelayMs, () => 0);
        const minute = Math.floor(now() / MINUTE_MS);
        serverLag[minute] = Math.max(serverLag[minute] ?? 0, lag);
        await sleep(CONNECTIONS_EVERY_MS);
      }
    })();
    // Every kiosk has booted by the end of the first interval: from then on, the steady day.
    if (runMs > pollMs) await sleep(pollMs - now());
    tally.windowStart = now();
    const first: Reading = await meters.read();

    // Changes stop two poll intervals before the end, so each one's deadline falls inside the run.
    const changesPerMinute = options.changeShare * schedules.length;
    const staff = changesPerMinute > 0
      ? staffAtWork(production.sql, schedules, {
        intervalMs: 60_000 / changesPerMinute, from: pollMs, until: runMs - 2 * pollMs, now, record: (c, at) => ledger.made(c, at), log,
      })
      : Promise.resolve();
    if (runMs - 2 * pollMs <= pollMs) {
      const note = `the run is too short to judge staff changes: a change is judged two poll intervals after it is made, after the boot interval, so it needs more than three (${(3 * options.pollSeconds) / 60} min at ${options.pollSeconds} s); none made`;
      log(note);
      notes.push(note);
    }
    if (options.workerLife && options.workerLife * 1000 >= runMs) notes.push(`--worker-life ${options.workerLife} s is no shorter than the run: one worker served it all`);
    const span = runMs - pollMs;
    const faults = options.faults
      ? injectFaults(production, meters, [pollMs + span / 4, pollMs + span / 2, pollMs + (3 * span) / 4], now, log)
      : Promise.resolve();

    const [answers] = await Promise.all([replayed, ...kiosks, ...copyRuns, staff, faults, workers]);
    await cpuSampled;
    const passRuns = await passes;
    const windowMs = now() - tally.windowStart;
    const last = await meters.read();
    counting = false;
    await counted;
    clearInterval(lagTimer);
    const durations = serverDurations(await scrape());
    const bootCpu = await booting.cpu;

    const changes = ledger.count();
    if (changes.seenInTime < changes.made) {
      const waiting = ledger.waiting();
      log(`unexpected: ${changes.made - changes.seenInTime} changes not seen by all their kiosks within two poll intervals; ${waiting.length} kiosks never saw one, e.g. ${waiting.slice(0, 5).join(", ")}`);
    }
    const dark = new Set(fleet.filter((kiosk) => kiosk.dark).map((kiosk) => kiosk.key));
    const alerts = { zone, offlineSeconds: options.offlineSeconds, passSeconds: options.passSeconds, runs: passRuns.runs, failedRuns: passRuns.failed,
      ...await judgeAlerts(production.sql, darkLedger, dark, { offlineMs, passMs, log }) };
    if (alerts.falseAlerts + alerts.late + alerts.missed > 0) {
      // The server's own account of its sighting writes and the database's availability meanwhile.
      for (const line of production.server.logs().split("\n").filter((l) => /sighting|database_(un)?available/.test(l)).slice(0, 20)) log(`server: ${line}`);
      log(`unexpected: offline alerts: ${alerts.falseAlerts} false, ${alerts.late} later than one run, ${alerts.missed} dark kiosks not alerted and recovered`);
    }
    // What is owed when the run ends goes out within two minutes, or counts as missing.
    const events = receiving && await receiving.judge(120_000);
    if (events && events.missing + events.unverified > 0) log(`unexpected: events: ${events.missing} of ${events.recorded} not received, ${events.unverified} requests not verified`);
    const round = (seconds: number) => Math.round(seconds * 100) / 100;
    const byMinute: Minute[] = cpuReadings.slice(1).map((reading, minute) => {
      const before = cpuReadings[minute];
      return {
        minute,
        seconds: round((reading.at - before.at) / 1000),
        byStatus: tally.byMinute[minute] ?? {},
        cpuSeconds: {
          server: round(reading.server - before.server),
          simulator: round(reading.simulator - before.simulator),
          database: round(reading.database - before.database),
          machine: round(reading.machine - before.machine),
        },
      };
    });
    const seats = { copiedShare: options.copiedShare, churnShare: options.churnShare, ipv6Share: options.ipv6Share,
      ...await judgeSeats(production.sql, copies, startedAt, log) };
    // A run of minutes finds only the copies that started early enough: what it judges is the
    // honest patterns (no flag) and that no copy was flagged before its second device started.
    const seatPatterns = answers && { answers, verdicts: await judgeReplay(production.sql, startedAt, runMs) };
    const seatPatternFlags = (seatPatterns?.verdicts ?? []).filter((v) => (v.kind === "honest" && v.flagged > 0) || v.flaggedBeforeCopy);
    for (const v of seatPatternFlags) log(`unexpected: seat checks flagged the ${v.kind} pattern "${v.name}" (${v.rules.join(", ")})`);
    const perDay = (delta: number) => (delta / fleet.length) * (86_400_000 / windowMs);
    const summary: Summary = {
      kiosks: fleet.length,
      minutes: options.minutes,
      pollSeconds: options.pollSeconds,
      perAddress: options.perAddress.low === options.perAddress.high ? String(options.perAddress.low) : `${options.perAddress.low}-${options.perAddress.high}`,
      registeredVenues,
      workerLifeSeconds: options.workerLife ?? null,
      workerStarts,
      notes,
      requests: tally.requests,
      byStatus: tally.byStatus,
      byRoute: tally.byRoute,
      byMinute,
      cores: cpus().length,
      unexpected: tally.unexpected + (booting.booted < booting.expected ? booting.expected - booting.booted : 0) + changes.made - changes.seenInTime + alerts.falseAlerts + alerts.late + alerts.missed + seats.falseFlags +
        seatPatternFlags.length + (events ? events.missing + events.unverified : 0),
      latencyMs: tally.latencyMs(),
      changes,
      perKioskDay: {
        requests: perDay(tally.windowRequests),
        databaseStatements: perDay(last.statements - first.statements),
        redisCommands: perDay(last.redisCommands - first.redisCommands),
        redisBytes: perDay(last.redisBytes - first.redisBytes),
        answerBytes: perDay(tally.windowAnswerBytes),
        serverCpuSeconds: perDay(last.serverCpuSeconds - first.serverCpuSeconds),
        databaseCpuSeconds: perDay(last.databaseCpuSeconds - first.databaseCpuSeconds),
      },
      peakConnections: { ...peak, toServer: gateway.most() },
      alerts,
      seats,
      ...(events ? { events } : {}),
      wait: {
        kiosk: tally.latencies.summary(),
        gateway: tally.gatewayWaits.summary(),
        onConnection: tally.onConnection.summary(),
        simulatorLoopDelayMs: simulatorLag.map((ms) => round(ms ?? 0)),
        serverLoopDelayMs: serverLag.map((ms) => round(ms ?? 0)),
        server: durations,
      },
      boot: {
        kiosks: booting.expected,
        booted: booting.booted,
        convergedSeconds: booting.at === null ? null : round(booting.at / 1000),
        cpuSeconds: bootCpu && {
          server: round(bootCpu.server - cpuReadings[0].server),
          simulator: round(bootCpu.simulator - cpuReadings[0].simulator),
          database: round(bootCpu.database - cpuReadings[0].database),
          machine: round(bootCpu.machine - cpuReadings[0].machine),
        },
      },
      ...(seatPatterns ? { seatPatterns } : {}),
    };
    log(`answers from the last known good (with Age) while the database was away: ${tally.stale}`);
    const serverLogs = production.server.logs();
    log(`requests the server shed as back-pressure (database_busy): at least ${shedInLogs(serverLogs)}; times it found the database unavailable: ${serverLogs.split('"event":"database_unavailable"').length - 1}`);
    for (const [kind, examples] of tally.examples) log(`unexpected: ${kind}: e.g. ${examples.join(" | ")}`);
    if (booting.booted < booting.expected) log(`unexpected: ${booting.expected - booting.booted} of ${booting.expected} kiosks never booted within the run`);
    else log(`every kiosk booted by ${Math.round(booting.at! / 1000)} s; the server refused ${Object.values(durations.shed).reduce((a, b) => a + b, 0)} requests for overload`);
    gateway.close();
    const text = JSON.stringify(Summary.parse(summary), null, 2);
    console.log(text);
    if (options.json) writeFileSync(options.json, text + "\n");
    if (options.statements) await writeCostliestStatements(production.sql, options.statements);
    return summary.unexpected === 0 ? 0 : 1;
  } finally {
    for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.removeSignalListener(signal, ended);
    await production.stop();
  }
}

let parsed;
try {
  parsed = parseOptions(process.argv.slice(2));
} catch (error) {
  console.error(`simulate: ${error instanceof Error ? error.message.split("\n").join("; ") : String(error)} (--help lists the options)`);
  process.exit(2);
}
// What goes wrong around the run (a server that will not start, a summary that will not read) is one line, not a stack.
try {
  if (parsed.mode === "help") console.log(USAGE);
  else if (parsed.mode === "cost") estimate(parsed.options);
  else if (parsed.mode === "corpus") process.exit(await corpus(parsed.options));
  else process.exit(await simulate(parsed.options));
} catch (error) {
  console.error(`simulate: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
  process.exit(2);
}
