// The seat checks' corpus on a fast clock: every pattern's timeline (seat-patterns.ts) played through
// the API's own sightings writers and the seat-check pass against a real database, as a day of
// Supabase would run them: each call reaching one of several instances at random, each instance
// writing every 5 s (a key at most every 30 s) and replaced after a worker's life, the pass every
// minute. `npm run simulate -- --seat-corpus` prints the confusion matrix; the tests play the fast
// patterns.
import type { Database } from "../../functions/app/db/database.ts";
import type { Logger } from "../../functions/app/log.ts";
import { checkSeats } from "../../functions/app/kiosk/seat-checks.ts";
import { kioskSightings, type SightingsWriter } from "../../functions/app/kiosk/sightings.ts";
import { patternTimeline, type SeatPattern, seeded } from "./seat-patterns.ts";

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
/** How often an instance writes, as SIGHTINGS_FLUSH_MS. */
const FLUSH_MS = 5 * SECOND;
/** Supabase's workers live 150 s (free) to 400 s (paid); each is replaced after a life drawn between. */
const WORKER_LIFE_MS: [number, number] = [150 * SECOND, 400 * SECOND];

/** What the corpus found for one pattern. */
export interface PatternVerdict {
  name: string;
  kind: "honest" | "copy";
  keys: number;
  /** Keys flagged: for an honest pattern the goal is 0. */
  flagged: number;
  rules: string[];
  /** A copy: from its second device's start to the first pass that flagged its key; null when not found. */
  foundAfterMs: number | null;
  /** A copy flagged before its second device started: a false flag of its honest part. */
  flaggedBeforeCopy: boolean;
  /** A copy whose second device started within the run (one running in business hours needs a run past 09:00). */
  copyRan: boolean;
  /** Its key's closest approach to a flag at a pass: uneven polls and polls in the current and previous hour, and how near (1: flagged). */
  closest: Closest;
  /** Its key's closest approach to a two_clocks flag at a pass: alternating polls, their drift's share of their swing, how near. */
  closestClocks: ClosestClocks;
  /** The docs' reason, for a copy no rule can tell from an honest pattern. */
  indistinguishable?: string;
}

/** A key's uneven polls and polls at a pass, and how near a flag that is: the lesser of uneven/threshold and share/least share. */
export interface Closest {
  uneven: number;
  polls: number;
  nearness: number;
}

/** A key's alternating polls and their drift's share of their swing at a pass, and how near a two_clocks flag: the lesser of alternating/threshold and ratio/share. */
export interface ClosestClocks {
  alternating: number;
  driftShare: number;
  nearness: number;
}

/** Each of some keys (`$1`) with alternating polls now: how many, their drift's share of their swing, and how near a two_clocks flag that is. */
export const CLOSEST_CLOCKS_SQL = `
  select s.key, s.alternating, s.drift / s.swing as "driftShare",
         least(s.alternating::float8 / w.two_clocks_polls_to_flag, w.two_clocks_ratio / greatest(s.drift / s.swing, 1e-9)) as nearness
    from (select license_key as key, (polls).alternating_this_hour + (polls).alternating_last_hour as alternating,
                 ((polls).swing_this_hour + (polls).swing_last_hour)::float8 as swing, ((polls).drift_this_hour + (polls).drift_last_hour)::float8 as drift
            from public.kiosk_sightings where license_key = any($1::text[])) as s,
         public.seat_watch as w
   where s.alternating > 0 and s.swing > 0`;

/** Each of some keys (`$1`) with uneven polls now: its uneven polls, polls, and how near a flag they are. */
export const CLOSEST_SQL = `
  select s.key, s.uneven, s.polls, least(s.uneven::float8 / w.uneven_polls_to_flag, s.uneven::float8 / greatest(1, s.polls) / w.uneven_polls_share) as nearness
    from (select license_key as key, (polls).uneven_this_hour + (polls).uneven_last_hour as uneven, (polls).polls_this_hour + (polls).polls_last_hour as polls
            from public.kiosk_sightings where license_key = any($1::text[])) as s,
         public.seat_watch as w
   where s.uneven > 0`;

/** The keys of pattern `n` in a run: `${prefix}-NNNN-KKKK`, a license key's shape (the prefix is two groups of four). */
export const patternKeys = (prefix: string, pattern: SeatPattern, n: number) =>
  Array.from({ length: pattern.keys }, (_, k) => `${prefix}-${String(n).padStart(4, "0")}-${String(k).padStart(4, "0")}`);

/**
 * Judges the patterns from the seat checks' suspicions (`flags`: key, rules, first flagged in epoch
 * ms) and each key's closest approach to a flag, for a run that started at `startedAt`.
 */
export function judgePatterns(
  patterns: SeatPattern[],
  keysOf: (pattern: SeatPattern, n: number) => string[],
  flags: Map<string, { rules: string[]; firstMs: number }>,
  closest: Map<string, Closest>,
  closestClocks: Map<string, ClosestClocks>,
  startedAt: number,
  runMs: number,
): PatternVerdict[] {
  return patterns.map((pattern, n) => {
    const keys = keysOf(pattern, n);
    const found = keys.flatMap((key) => (flags.has(key) ? [flags.get(key)!] : []));
    const copyAt = pattern.copyFrom ? startedAt + pattern.copyFrom(runMs) : null;
    const first = Math.min(...found.map((flag) => flag.firstMs));
    return {
      name: pattern.name,
      kind: pattern.kind,
      keys: keys.length,
      flagged: found.length,
      rules: [...new Set(found.flatMap((flag) => flag.rules))].sort(),
      foundAfterMs: copyAt !== null && found.length > 0 ? Math.max(0, first - copyAt) : null,
      flaggedBeforeCopy: copyAt !== null && found.length > 0 && first < copyAt,
      copyRan: pattern.copyFrom !== undefined && pattern.copyFrom(runMs) < runMs,
      closest: keys.map((key) => closest.get(key) ?? { uneven: 0, polls: 0, nearness: 0 }).reduce((a, b) => (b.nearness > a.nearness ? b : a)),
      closestClocks: keys.map((key) => closestClocks.get(key) ?? { alternating: 0, driftShare: 0, nearness: 0 }).reduce((a, b) => (b.nearness > a.nearness ? b : a)),
      ...(pattern.indistinguishable ? { indistinguishable: pattern.indistinguishable } : {}),
    };
  });
}

export interface CorpusRun {
  /** The database, as the API reaches it. */
  db: Database;
  /** The account the keys are added to (its schedule and e-mail do not matter here). */
  accountEmail: string;
  /** The first two groups of the run's keys (`CRPS-0001`): each key is a license key's four groups of four. */
  prefix: string;
  patterns: SeatPattern[];
  /** Where the fast clock starts (epoch ms) and how long it runs. */
  startAt: number;
  runMs: number;
  /** API instances the calls are spread over. */
  instances: number;
  seed: number;
  log: Logger;
  /** Told every simulated hour (a long run's progress). */
  progress?: (hoursDone: number) => void;
}

/**
 * Plays `run.patterns` for `run.runMs` on a fast clock, returning a verdict per pattern. Calls go
 * to a random instance; each instance's writer is the API's (`kioskSightings`), driven by the
 * clock: it writes every 5 s of the run and, when replaced, what it still holds (as a worker does
 * at its end).
 */
export async function playCorpus(run: CorpusRun): Promise<PatternVerdict[]> {
  const keysOf = (pattern: SeatPattern, n: number) => patternKeys(run.prefix, pattern, n);
  const allKeys = run.patterns.flatMap((pattern, n) => keysOf(pattern, n));
  await run.db.query(
    `insert into public.license_keys (key, account_id, email)
     select k, a.id, a.email from unnest($1::text[]) as k, public.accounts as a where a.email = $2`,
    [allKeys, run.accountEmail],
  );
  const calls = run.patterns
    .flatMap((pattern, n) => patternTimeline(pattern, n, run.runMs, run.seed).map((call) => ({ ...call, key: keysOf(pattern, n)[call.key] })))
    .sort((a, b) => a.at - b.at);
  let at = run.startAt;
  const now = () => at;
  const random = seeded(run.seed);
  const lifetime = () => WORKER_LIFE_MS[0] + random() * (WORKER_LIFE_MS[1] - WORKER_LIFE_MS[0]);
  // The timer a writer schedules is never waited for: the clock here drives every write.
  const writer = () => ({ sightings: kioskSightings({ db: run.db, now, log: run.log, flushEveryMs: 24 * 60 * MINUTE }), until: at + lifetime() });
  const instances: Array<{ sightings: SightingsWriter; until: number }> = Array.from({ length: run.instances }, writer);
  const ports = { db: run.db, now, log: run.log };
  const closest = new Map<string, Closest>();
  const closestClocks = new Map<string, ClosestClocks>();
  let next = 0;
  for (let tick = FLUSH_MS; tick <= run.runMs; tick += FLUSH_MS) {
    for (; next < calls.length && calls[next].at < tick; next++) {
      const call = calls[next];
      at = run.startAt + call.at;
      const instance = instances[Math.floor(random() * instances.length)];
      instance.sightings.saw(call.key, call.ip, {
        starting: call.route === "license" || call.route === "system-name",
        ...(call.route === "system-name" ? { systemName: `Kiosk ${call.key.slice(-9)}` } : {}),
      });
    }
    at = run.startAt + tick;
    for (const [i, instance] of instances.entries()) {
      if (at >= instance.until) {
        await instance.sightings.close();
        instances[i] = writer();
      } else {
        await instance.sightings.flush();
      }
    }
    if (tick % MINUTE === 0) {
      await checkSeats(ports);
      for (const { key, ...now } of await run.db.query<Closest & { key: string }>(CLOSEST_SQL, [allKeys])) {
        if (now.nearness > (closest.get(key)?.nearness ?? 0)) closest.set(key, now);
      }
      for (const { key, ...now } of await run.db.query<ClosestClocks & { key: string }>(CLOSEST_CLOCKS_SQL, [allKeys])) {
        if (now.nearness > (closestClocks.get(key)?.nearness ?? 0)) closestClocks.set(key, now);
      }
    }
    if (tick % (60 * MINUTE) === 0) run.progress?.(tick / (60 * MINUTE));
  }
  for (const instance of instances) await instance.sightings.close();
  const flags = new Map(
    (await run.db.query<{ key: string; rules: string[]; first_ms: number }>(
      `select license_key as key, rules, (extract(epoch from first_flagged_at) * 1000)::float8 as first_ms
         from public.seat_suspicions where license_key = any($1::text[])`,
      [allKeys],
    )).map((row) => [row.key, { rules: row.rules, firstMs: row.first_ms }]),
  );
  return judgePatterns(run.patterns, keysOf, flags, closest, closestClocks, run.startAt, run.runMs);
}

/** The confusion matrix as Markdown: each pattern, what it is, the flags it raised or how soon it was found, and its key's closest approach to a flag. */
export function corpusMatrix(verdicts: PatternVerdict[]): string {
  const minutes = (ms: number) => `${Math.round(ms / MINUTE)} min`;
  const row = (v: PatternVerdict) => {
    const outcome = v.kind === "honest"
      ? `${v.flagged} flag${v.flagged === 1 ? "" : "s"}${v.flagged > 0 ? ` (${v.rules.join(", ")})` : ""}`
      : v.flaggedBeforeCopy
      ? `flagged before the copy started (${v.rules.join(", ")})`
      : v.foundAfterMs !== null
      ? `found after ${minutes(v.foundAfterMs)} (${v.rules.join(", ")})`
      : !v.copyRan
      ? "not judged: the copy did not run within the run"
      : v.indistinguishable
      ? `not found: cannot be told from ${v.indistinguishable}`
      : "**missed**";
    const { uneven, polls, nearness } = v.closest;
    const closest = uneven === 0
      ? "none uneven"
      : `${uneven} uneven of ${polls} polls (${nearness >= 1 ? "over both thresholds" : `${Math.round(nearness * 100)} % of the way`})`;
    const clocks = v.closestClocks.alternating === 0
      ? "none alternating"
      : `${v.closestClocks.alternating} alternating, drift ${v.closestClocks.driftShare.toFixed(2)} of swing (${
        v.closestClocks.nearness >= 1 ? "over both thresholds" : `${Math.round(v.closestClocks.nearness * 100)} % of the way`
      })`;
    return `| ${v.name}${v.keys > 1 ? ` (${v.keys} keys)` : ""} | ${v.kind} | ${outcome} | ${closest} | ${clocks} |`;
  };
  return [
    "| pattern | kind | outcome | closest to uneven_polls at a pass: uneven polls of polls in two hours, how near | closest to two_clocks: alternating polls in two hours, their drift's share of their swing, how near |",
    "|---|---|---|---|---|",
    ...verdicts.map(row),
  ].join("\n");
}

/** Whether the corpus holds: no honest flag, every copy found after it started but those the docs name. */
export const corpusHolds = (verdicts: PatternVerdict[]) =>
  verdicts.every((v) =>
    v.kind === "honest" ? v.flagged === 0 : !v.flaggedBeforeCopy && (v.foundAfterMs !== null || !v.copyRan || v.indistinguishable !== undefined)
  );
