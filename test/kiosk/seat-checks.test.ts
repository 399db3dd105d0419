import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { DatabaseUnavailable } from "../../functions/app/db/unavailable.ts";
import { checkSeats } from "../../functions/app/kiosk/seat-checks.ts";
import { BURSTS_KEPT_PER_KEY, type KioskCall, kioskSightings } from "../../functions/app/kiosk/sightings.ts";
import { corpusMatrix, type PatternVerdict, playCorpus } from "../simulate/seat-corpus.ts";
import { SEAT_PATTERNS, seeded } from "../simulate/seat-patterns.ts";
import { memoryLogger, testApp } from "../support/app.ts";
import { testClock } from "../support/clock.ts";
import { freshDatabase, type TestDatabase } from "../support/database.ts";

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DEMO_ACCOUNT = "a0000000-0000-4000-8000-000000000001";
const DEMO_USER = "e0000000-0000-4000-8000-000000000001";
const OTHER_USER = "e0000000-0000-4000-8000-000000000002";

/** One call: when (ms from the timeline's start), which key, from where, what it was, and which instance answered it. */
interface Call extends KioskCall {
  at: number;
  key: string;
  ip: string;
  instance?: number;
}

/** A kiosk polling `key` every `everyMs` (schedule and proclamations, 0.6 s apart) from `from` to `until`, from `ip(i)` at its i-th poll. */
function polls(key: string, ip: (i: number) => string, from: number, until: number, everyMs = MINUTE): Call[] {
  const calls: Call[] = [];
  for (let at = from, i = 0; at < until; at += everyMs, i += 1) calls.push({ at, key, ip: ip(i) }, { at: at + 600, key, ip: ip(i) });
  return calls;
}

/**
 * A kiosk polling `key` every `everyMs` with the usual jitter (each interval within 10 % either way,
 * drawn from `random`), from `from` to `until`, from `ip(i)` at its i-th poll: its schedule and, but
 * for a kiosk making one call a poll, its proclamations 0.6 s later.
 */
function jittered(key: string, ip: (i: number) => string, from: number, until: number, random: () => number, everyMs = MINUTE, callsAPoll = 2): Call[] {
  const calls: Call[] = [];
  for (let at = from, i = 0; at < until; at += everyMs * (1 + 0.1 * (2 * random() - 1)), i += 1) {
    for (let call = 0; call < callsAPoll; call++) calls.push({ at: Math.round(at) + call * 600, key, ip: ip(i) });
  }
  return calls;
}

/** A kiosk starting: it validates, writes its name and reads its schedule and proclamations, at `at`. */
function start(key: string, ip: string, at: number, name: string): Call[] {
  return [
    { at, key, ip, starting: true },
    { at: at + 700, key, ip, systemName: name, starting: true },
    { at: at + 1_400, key, ip },
    { at: at + 2_000, key, ip },
  ];
}

let database: TestDatabase;
let sql: postgres.Sql;
let serial = 0;

beforeAll(async () => {
  database = await freshDatabase();
  sql = postgres(database.url, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await sql.end();
  await database.drop();
});

/** New keys of the demo account, fresh for each test. */
async function newKeys(count: number): Promise<string[]> {
  const keys = Array.from({ length: count }, () => `SEAT-0000-0000-${String((serial += 1)).padStart(4, "0")}`);
  await sql`insert into public.license_keys (key, account_id, email) select k, ${DEMO_ACCOUNT}, 'demo@example.com' from unnest(${keys}::text[]) as k`;
  return keys;
}

/**
 * Plays `calls` in time order through `instances` sightings writers (a call goes to its `instance`,
 * else the first), each writing every 5 s as an instance does, and passes every minute; returns
 * the clock, the timeline's start and the statements the writers sent.
 */
async function play(calls: Call[], instances = 1) {
  const clock = testClock();
  const start = clock.now();
  const statements: string[] = [];
  const db: Database = { ...database.db, query: (text, params, options) => (statements.push(text), database.db.query(text, params, options)) };
  const writers = Array.from({ length: instances }, () => kioskSightings({ db, now: clock.now, log: memoryLogger().log, flushEveryMs: 24 * HOUR }));
  const ports = { db: database.db, now: clock.now, log: memoryLogger().log };
  const sorted = [...calls].sort((a, b) => a.at - b.at);
  const end = (sorted.at(-1)?.at ?? 0) + 2 * MINUTE;
  let next = 0;
  for (let tick = 5 * SECOND; tick <= end; tick += 5 * SECOND) {
    for (; next < sorted.length && sorted[next].at < tick; next++) {
      const { at, key, ip, instance = 0, ...call } = sorted[next];
      clock.advance(start + at - clock.now());
      writers[instance].saw(key, ip, call);
    }
    clock.advance(start + tick - clock.now());
    for (const writer of writers) await writer.flush();
    if (tick % MINUTE === 0) await checkSeats(ports);
  }
  for (const writer of writers) await writer.close();
  await checkSeats(ports);
  return { clock, start, statements };
}

const rulesOf = async (key: string) =>
  (await sql`select rules from public.seat_suspicions where license_key = ${key}`)[0]?.rules as string[] | undefined;
/**
 * A key's polls as the next write that settles would leave them (a write settles once it holds six
 * bursts): its recent polls' starts (ms from `t0`), its unsettled bursts' spans and kiosk starts,
 * its polls and uneven polls in the current and previous hour.
 */
async function evidenceOf(key: string, t0 = 0) {
  const [row] = await sql`
    select array(select (extract(epoch from at) * 1000)::float8 - ${t0} from unnest(p.recent) as at) as recent,
           array(select (extract(epoch from b.last - b.first) * 1000)::float8 from unnest(p.firsts, p.lasts) as b(first, last)) as spans,
           p.starts, p.polls_this_hour + p.polls_last_hour as polls, p.uneven_this_hour + p.uneven_last_hour as uneven
      from public.kiosk_sightings as s, cadence.settle_polls(s.polls, null, null, null, interval '5 seconds', s.last_seen_at) as p
     where s.license_key = ${key}`;
  return row as { recent: number[]; spans: number[]; starts: boolean[]; polls: number; uneven: number };
}

describe("seat checks: the corpus of how kiosks really call (test/simulate/seat-patterns.ts), four hours through three instances", () => {
  // The whole corpus on a fast clock, every pattern at once: calls spread over three instances at
  // random, each replaced after a worker's life. A day of it is `npm run simulate -- --seat-corpus`
  // (test/bench/results.md); four hours hold every honest pattern's events, and find every copy
  // started an hour in. Deterministic: one seed, and the clock drives every write.
  const runMs = 4 * HOUR;
  let verdicts: PatternVerdict[];
  beforeAll(async () => {
    verdicts = await playCorpus({
      db: database.db, accountEmail: "demo@example.com", prefix: "CRPS-0001", patterns: SEAT_PATTERNS, startAt: testClock().now(), runMs,
      instances: 3, seed: 1, log: memoryLogger().log,
    });
  });

  it.each(SEAT_PATTERNS.filter((pattern) => pattern.kind === "honest").map((pattern) => pattern.name))("honest: %s raises no flag", (name) => {
    const verdict = verdicts.find((v) => v.name === name)!;
    expect(verdict, corpusMatrix([verdict])).toMatchObject({ flagged: 0 });
  });

  it.each(SEAT_PATTERNS.filter((pattern) => pattern.kind === "copy" && !pattern.indistinguishable && pattern.copyFrom!(runMs) < runMs).map((p) => p.name))(
    "copy: %s is found within three hours of its second device (the 5-minute copy is the slowest), after it started",
    (name) => {
      const verdict = verdicts.find((v) => v.name === name)!;
      expect(verdict.flaggedBeforeCopy, corpusMatrix([verdict])).toBe(false);
      expect(verdict.rules.filter((rule) => !["two_clocks", "uneven_polls"].includes(rule))).toEqual([]);
      expect(verdict.foundAfterMs).not.toBeNull();
      expect(verdict.foundAfterMs!).toBeLessThanOrEqual(3 * HOUR);
    },
  );

  it.each(SEAT_PATTERNS.filter((pattern) => pattern.indistinguishable).map((pattern) => [pattern.name, pattern.indistinguishable]))(
    "a copy the docs name as indistinguishable: %s is not flagged (it looks like %s)",
    (name) => {
      expect(verdicts.find((v) => v.name === name)).toMatchObject({ flagged: 0 });
    },
  );
});

describe("seat checks: polls, not calls", () => {
  it("a poll's calls are one poll whatever their addresses and instances; a start (validation, name) is not a poll", async () => {
    const [key] = await newKeys(1);
    const calls = [
      ...start(key, "198.51.100.7", 0, "Lobby"),
      // Each poll's two calls leave through two links and reach two instances.
      ...polls(key, () => "198.51.100.7", MINUTE, 7 * MINUTE).map((call, i) => ({ ...call, ip: i % 2 ? "2001:db8:7::9" : "203.0.113.7", instance: i % 2 })),
    ];
    const { start: t0 } = await play(calls, 2);
    // Six polls: four settled, the last two unsettled (each one poll of two calls); the start is none of them.
    expect(await evidenceOf(key, t0)).toEqual({ recent: [1, 2, 3, 4].map((minute) => minute * MINUTE), spans: [600, 600], starts: [false, false], polls: 4, uneven: 0 });
    expect(await rulesOf(key)).toBeUndefined();
  });

  it("a start is told apart even when its validation reaches another instance, written after its reads", async () => {
    const [key] = await newKeys(1);
    // A restart 10 s after every third poll: its validation and name reach instance 1, which wrote the
    // key for the poll before and holds them until 30 s after; its reads reach instance 0, written
    // first. Taken for a poll, each start would make the poll before it uneven (10 s, then 50 s).
    const calls: Call[] = polls(key, () => "198.51.100.8", 0, 60 * MINUTE).map((call) => ({ ...call, instance: Math.floor(call.at / MINUTE) % 3 === 2 ? 1 : 0 }));
    for (let at = 2 * MINUTE + 10 * SECOND; at < 60 * MINUTE; at += 3 * MINUTE) {
      calls.push(...start(key, "198.51.100.8", at, "Lobby").map((call) => ({ ...call, instance: call.starting ? 1 : 0 })));
    }
    await play(calls, 2);
    expect(await evidenceOf(key)).toMatchObject({ uneven: 0 });
    expect(await rulesOf(key)).toBeUndefined();
  });

  it("a call of a poll written after that poll settled (held across an outage) is left out, never a poll of its own", async () => {
    const [key] = await newKeys(1);
    const clock = testClock();
    const t0 = clock.now();
    let down = false;
    const failing: Database = {
      ...database.db,
      query: (text, params, options) => (down ? Promise.reject(new DatabaseUnavailable("paused by the test")) : database.db.query(text, params, options)),
    };
    const held = kioskSightings({ db: failing, now: clock.now, log: memoryLogger().log, flushEveryMs: 24 * HOUR, perKeyMs: 0 });
    const live = kioskSightings({ db: database.db, now: clock.now, log: memoryLogger().log, flushEveryMs: 24 * HOUR, perKeyMs: 0 });
    // Polls every minute; the fourth poll's second call reaches instance `held`, which cannot write it
    // until the sixth poll's write settled the fourth.
    for (let i = 0; i < 6; i++) {
      clock.advance(t0 + i * MINUTE - clock.now());
      live.saw(key, "198.51.100.9");
      if (i === 3) {
        clock.advance(600);
        held.saw(key, "203.0.113.9");
        down = true;
        await held.flush();
        down = false;
      }
      await live.flush();
    }
    expect(await evidenceOf(key, t0)).toMatchObject({ recent: [0, 1, 2, 3].map((minute) => minute * MINUTE), uneven: 0 });
    await held.flush();
    // Taken for a poll, it would have come 0.6 s after the fourth: uneven.
    expect(await evidenceOf(key, t0)).toMatchObject({ recent: [0, 1, 2, 3].map((minute) => minute * MINUTE), polls: 4, uneven: 0 });
  });

  it("a second device is flagged behind the same address, on any family, from when its polls come", async () => {
    const [sameNat, otherFamily] = await newKeys(2);
    const { start: t0 } = await play([
      ...polls(sameNat, () => "198.51.100.20", 0, 90 * MINUTE),
      ...polls(sameNat, () => "198.51.100.20", 10 * MINUTE + 17 * SECOND, 90 * MINUTE, 61 * SECOND),
      ...polls(otherFamily, (i) => `2001:db8:21::${i + 1}`, 0, 90 * MINUTE),
      ...polls(otherFamily, () => "203.0.113.21", 10 * MINUTE + 13 * SECOND, 90 * MINUTE, 59 * SECOND),
    ]);
    // The copy on the other family also keeps its own network poll after poll (two_clocks, below).
    expect(await rulesOf(sameNat)).toEqual(["uneven_polls"]);
    expect(await rulesOf(otherFamily)).toEqual(["two_clocks", "uneven_polls"]);
    for (const key of [sameNat, otherFamily]) {
      const [flagged] = await sql`select (extract(epoch from first_flagged_at) * 1000)::float8 as ms from public.seat_suspicions where license_key = ${key}`;
      expect(flagged.ms - (t0 + 10 * MINUTE)).toBeLessThanOrEqual(60 * MINUTE);
    }
    const [copy] = await sql`select rules, polls_this_hour, polls_last_hour, uneven_polls_this_hour, uneven_polls_last_hour, recent_polls, last_seen_ip
                               from public.suspected_copies where license_key = ${otherFamily}`;
    expect(copy.uneven_polls_this_hour + copy.uneven_polls_last_hour).toBeGreaterThanOrEqual(6);
    expect(copy.polls_this_hour + copy.polls_last_hour).toBeGreaterThan(60);
    expect(copy.recent_polls).toHaveLength(6);
    expect(copy.last_seen_ip).toBe("203.0.113.21");
    const [status] = await sql`select suspected_copy from public.kiosk_status where license_key = ${otherFamily}`;
    expect(status.suspected_copy).toBe(true);
  });

  it("one device losing polls makes a few uneven ones, fewer than uneven_polls_share of its polls: not flagged", async () => {
    const [key] = await newKeys(1);
    // Polls every 30 s for 112 minutes; six times, two polls get through with three lost on either
    // side: the second comes a quarter of its neighbouring gaps after the first, as a copy's would.
    const lost = new Set([0, 1, 2, 3, 4, 5].flatMap((k) => [10, 11, 12, 15, 16, 17].map((i) => i + 40 * k)));
    await play(polls(key, () => "198.51.100.30", 0, 112 * MINUTE, 30 * SECOND).filter((call) => !lost.has(Math.floor(call.at / (30 * SECOND)))));
    const seen = await evidenceOf(key);
    expect(seen.uneven).toBe(6);
    expect(seen.uneven).toBeLessThan(0.05 * seen.polls);
    expect(await rulesOf(key)).toBeUndefined();
  });

  it("system_name_flips: two kiosks writing their own names at each start are flagged", async () => {
    const [key] = await newKeys(1);
    const calls = [0, 1, 2].flatMap((hour) => [
      ...start(key, "198.51.100.31", hour * HOUR, "Lobby"),
      ...start(key, "198.51.100.31", hour * HOUR + 5 * MINUTE, "Lobby 2"),
    ]);
    await play(calls);
    expect(await rulesOf(key)).toEqual(["system_name_flips"]);
  });

  it("a kiosk renamed once by its holder is not flagged", async () => {
    const [key] = await newKeys(1);
    await play([...start(key, "198.51.100.32", 0, "Lobby"), ...start(key, "198.51.100.32", 10 * MINUTE, "Front desk"), ...start(key, "198.51.100.32", 20 * MINUTE, "Front desk")]);
    expect(await rulesOf(key)).toBeUndefined();
  });
});

describe("seat checks: two clocks (a copy polling in step, issue 60)", () => {
  /** When `key` was first flagged, ms after `from`; null when not. */
  const flaggedAfter = async (key: string, from: number) => {
    const [row] = await sql`select (extract(epoch from first_flagged_at) * 1000)::float8 as ms from public.seat_suspicions where license_key = ${key}`;
    return row ? row.ms - from : null;
  };

  it.each([0, 5, 15, 30])("a copy polling as often, started %i s after one of the original's polls in its /24, is flagged within 30 minutes", async (offset) => {
    const [key] = await newKeys(1);
    const random = seeded(60 + offset);
    const original = jittered(key, () => "198.51.100.60", 0, 75 * MINUTE, random);
    const copyFrom = original.find((call) => call.at >= 20 * MINUTE)!.at + offset * SECOND;
    const { start: t0 } = await play([...original, ...start(key, "198.51.100.61", copyFrom, "Lobby"), ...jittered(key, () => "198.51.100.61", copyFrom + MINUTE, 75 * MINUTE, random)]);
    expect(await rulesOf(key)).toContain("two_clocks");
    expect(await flaggedAfter(key, t0 + copyFrom)).toBeLessThanOrEqual(30 * MINUTE);
  });

  it("a copy on the other family, 30 s after, keeps its /64 while its privacy address changes: flagged within 30 minutes", async () => {
    const [key] = await newKeys(1);
    const random = seeded(61);
    const original = jittered(key, () => "198.51.100.62", 0, 75 * MINUTE, random);
    const copyFrom = original.find((call) => call.at >= 20 * MINUTE)!.at + 30 * SECOND;
    const { start: t0 } = await play([
      ...original,
      ...jittered(key, (i) => `2001:db8:62:1:${((i * 7919) % 0xffff).toString(16)}::${(i + 1).toString(16)}`, copyFrom, 75 * MINUTE, random),
    ]);
    expect(await rulesOf(key)).toContain("two_clocks");
    expect(await flaggedAfter(key, t0 + copyFrom)).toBeLessThanOrEqual(30 * MINUTE);
  });

  it("two WAN links balanced round-robin across polls, one call a poll, every 30 s: alternating polls of one clock, not flagged", async () => {
    const [key] = await newKeys(1);
    await play(jittered(key, (i) => (i % 2 ? "203.0.113.63" : "198.51.100.63"), 0, 2 * HOUR, seeded(63), 30 * SECOND, 1));
    const [counts] = await sql`select (polls).alternating_this_hour + (polls).alternating_last_hour as alternating,
                                      (polls).drift_this_hour + (polls).drift_last_hour as drift, (polls).swing_this_hour + (polls).swing_last_hour as swing
                                 from public.kiosk_sightings where license_key = ${key}`;
    expect(counts.alternating).toBeGreaterThan(100);
    expect(counts.drift).toBeGreaterThan(counts.swing);
    expect(await rulesOf(key)).toBeUndefined();
  });

  it("two WAN links balanced per call put both networks in each poll: no poll alternates", async () => {
    const [key] = await newKeys(1);
    await play(jittered(key, () => "unused", 0, HOUR, seeded(64)).map((call, i) => ({ ...call, ip: i % 2 ? "203.0.113.64" : "198.51.100.64", instance: i % 2 })), 2);
    const [counts] = await sql`select (polls).alternating_this_hour as alternating from public.kiosk_sightings where license_key = ${key}`;
    expect(counts.alternating).toBe(0);
    expect(await rulesOf(key)).toBeUndefined();
  });
});

describe("seat checks: the evidence rides on the sightings writes, bounded", () => {
  it("adds no database write to a kiosk request: a key's calls through the API send the routes' statements, and the evidence goes in the sightings write", async () => {
    const [key] = await newKeys(1);
    const clock = testClock();
    const onRequests: string[] = [];
    const byWriter: string[] = [];
    let sink = onRequests;
    const db: Database = { ...database.db, query: (text, params, options) => (sink.push(text), database.db.query(text, params, options)) };
    const sightings = kioskSightings({ db, now: clock.now, log: memoryLogger().log, flushEveryMs: 24 * HOUR, perKeyMs: 0 });
    const { request } = testApp(db, { now: clock.now, sightings });
    for (const [i, ip] of ["198.51.100.121", "2001:db8:12:1::5", "203.0.113.121", "198.51.100.121"].entries()) {
      const init = { headers: { "content-type": "application/json", "x-forwarded-for": ip } };
      expect((await request("/api/v2/license", { ...init, method: "POST", body: JSON.stringify({ license_key: key, email_address: "demo@example.com" }) })).status).toBe(200);
      expect((await request(`/api/v2/licenses/${key}/system-name`, { ...init, method: "PUT", body: JSON.stringify({ systemName: `Lobby ${i % 2}` }) })).status).toBe(200);
      expect((await request(`/api/v2/licenses/${key}/schedule`, init)).status).toBe(200);
      const entitled = { headers: { ...init.headers, "x-license-key": key, "x-email": "demo@example.com" } };
      expect((await request("/api/v2/proclamations", entitled)).status).toBe(200);
      clock.advance(30_000);
    }
    sink = byWriter;
    await sightings.close();
    expect(onRequests.length).toBeGreaterThan(0);
    expect(onRequests.filter((text) => /kiosk_sightings|seat_|record_kiosk/.test(text))).toEqual([]);
    expect(byWriter.map((text) => text.trim().slice(0, 34))).toEqual(["select cadence.record_kiosk_polls("]);
    // One write of a new key: its four starts, 30 s apart, none a poll.
    expect(await evidenceOf(key)).toMatchObject({ recent: [], starts: [true, true], polls: 0 });
    const [seen] = await sql`select system_name_changes from public.kiosk_sightings where license_key = ${key}`;
    expect(seen).toEqual({ system_name_changes: 3 });
  });

  it("every statement the writers send is one record_kiosk_polls", async () => {
    const [key] = await newKeys(1);
    const { statements } = await play([...polls(key, () => "198.51.100.40", 0, 5 * MINUTE), ...polls(key, () => "203.0.113.40", 30_000, 5 * MINUTE)], 2);
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.filter((text) => !/^select cadence\.record_kiosk_polls\(/.test(text.trim()))).toEqual([]);
  });

  it("a key called every 6 s from new addresses keeps at most BURSTS_KEPT_PER_KEY bursts a write, and two unsettled once written again", async () => {
    const [key] = await newKeys(1);
    const clock = testClock();
    const written: unknown[][] = [];
    const db: Database = { ...database.db, query: (text, params, options) => (written.push([...params!]), database.db.query(text, params, options)) };
    const sightings = kioskSightings({ db, now: clock.now, log: memoryLogger().log, flushEveryMs: 24 * HOUR, perKeyMs: 0 });
    for (let i = 0; i < 1_000; i++) {
      sightings.saw(key, `198.51.${100 + (i >> 8)}.${i & 255}`);
      clock.advance(6 * SECOND);
      if (i === 499) await sightings.flush();
    }
    await sightings.close();
    // The write's tenth parameter: each key's count of bursts.
    expect(written.map((params) => (params[9] as number[])[0])).toEqual([BURSTS_KEPT_PER_KEY, BURSTS_KEPT_PER_KEY]);
    expect(await evidenceOf(key)).toMatchObject({ starts: [false, false], recent: expect.any(Array) });
    expect((await evidenceOf(key)).recent).toHaveLength(6);
  });

  it("a write the database missed (unavailable) keeps its bursts and names for the next", async () => {
    const [key] = await newKeys(1);
    const clock = testClock();
    let failures = 1;
    const db: Database = {
      ...database.db,
      query: (text, params, options) =>
        failures-- > 0 ? Promise.reject(new DatabaseUnavailable("paused by the test")) : database.db.query(text, params, options),
    };
    const sightings = kioskSightings({ db, now: clock.now, log: memoryLogger().log, flushEveryMs: 24 * HOUR, perKeyMs: 0 });
    sightings.saw(key, "198.51.100.50", { systemName: "Lobby", starting: true });
    clock.advance(30_000);
    sightings.saw(key, "203.0.113.50");
    await sightings.flush();
    clock.advance(2_000);
    sightings.saw(key, "198.51.100.50");
    clock.advance(28_000);
    sightings.saw(key, "198.51.100.50", { systemName: "Hall", starting: true });
    await sightings.close();
    // One write of a new key, three bursts: the start (settled, not a poll), the poll at 30 s (its
    // second call 2 s later, seen after the failed write), the start at 60 s.
    expect(await evidenceOf(key)).toMatchObject({ recent: [], starts: [false, true], spans: [2_000, 0] });
    const [seen] = await sql`select system_name_written, system_name_changes from public.kiosk_sightings where license_key = ${key}`;
    expect(seen).toEqual({ system_name_written: "Hall", system_name_changes: 1 });
  });

  it("the write of API instances deployed before the polls (record_kiosk_sightings) still records their sightings and names", async () => {
    const [key] = await newKeys(1);
    await sql`select cadence.record_kiosk_sightings(array[${key}], array[now()], array['198.51.100.60']::inet[], array[null]::text[],
                array[3], array['Lobby'], array['Hall'], array[1], array[${key}], array['198.51.100.60/32']::cidr[], array[now()], array[now()], array[3], array[0])`;
    const [seen] = await sql`select host(last_seen_ip) as last_seen_ip, system_name_written, system_name_changes, (polls).firsts from public.kiosk_sightings where license_key = ${key}`;
    expect(seen).toEqual({ last_seen_ip: "198.51.100.60", system_name_written: "Hall", system_name_changes: 1, firsts: null });
  });
});

describe("seat checks: the daily digest e-mail to staff", () => {
  it("is off by default; with seat_watch.digest_to set, one e-mail a day lists the keys flagged since the last", async () => {
    const [key] = await newKeys(1);
    const outbox = async () => (await sql`select recipient, subject, text_body from public.email_outbox where recipient = 'staff@example.com'`);
    const { clock } = await play([...polls(key, () => "198.51.100.90", 0, 40 * MINUTE), ...polls(key, () => "203.0.113.90", 17_000, 40 * MINUTE)]);
    expect(await rulesOf(key)).toEqual(["two_clocks", "uneven_polls"]);
    expect(await outbox()).toEqual([]);
    await sql`update public.seat_watch set digest_to = 'staff@example.com'`;
    try {
      const ports = { db: database.db, now: clock.now, log: memoryLogger().log };
      expect((await checkSeats(ports)).digest).toBe(true);
      const [mail] = await outbox();
      expect(mail.subject).toMatch(/possibly copied/);
      expect(mail.text_body).toContain(key);
      expect(mail.text_body).toMatch(/uneven_polls; first flagged .*; \d+ uneven polls in the last two hours/);
      clock.advance(23 * HOUR);
      expect((await checkSeats(ports)).digest).toBe(false);
      expect(await outbox()).toHaveLength(1);
    } finally {
      await sql`update public.seat_watch set digest_to = null, last_digest_at = null`;
    }
  });
});

describe("seat checks through Supabase's Data API: account holders see their own keys' flags only", () => {
  /** Runs `query` as the Data API runs a request: a transaction as `role`, with the JWT claims of `user`. */
  async function asRole(role: "anon" | "authenticated", query: string, user = DEMO_USER) {
    const claims = role === "anon" ? { role } : { sub: user, role };
    return sql.begin(async (tx) => {
      await tx.unsafe(`set local role ${role}`);
      await tx`select set_config('request.jwt.claims', ${JSON.stringify(claims)}, true)`;
      return [...await tx.unsafe(query)];
    });
  }
  let key: string;

  beforeAll(async () => {
    [key] = await newKeys(1);
    await sql`insert into auth.users (id, email) values (${DEMO_USER}, 'demo@example.com'), (${OTHER_USER}, 'other@example.com') on conflict do nothing`;
    await sql`update public.accounts set auth_user_id = ${DEMO_USER} where email = 'demo@example.com'`;
    await sql`update public.accounts set auth_user_id = ${OTHER_USER} where email = 'other@example.com'`;
    await play([...polls(key, () => "198.51.100.110", 0, 40 * MINUTE), ...polls(key, () => "203.0.113.110", 17_000, 40 * MINUTE)]);
  });

  it("the holder of the key sees its flag in kiosk_status, its rules in seat_suspicions and its own sightings row whole", async () => {
    expect(await asRole("authenticated", `select suspected_copy from public.kiosk_status where license_key = '${key}'`)).toEqual([{ suspected_copy: true }]);
    expect(await asRole("authenticated", `select license_key, rules from public.seat_suspicions where license_key = '${key}'`))
      .toEqual([{ license_key: key, rules: ["two_clocks", "uneven_polls"] }]);
    expect(await asRole("authenticated", `select * from public.kiosk_sightings where license_key = '${key}'`)).toHaveLength(1);
    const [row] = await asRole("authenticated", `select (polls).uneven_this_hour + (polls).uneven_last_hour as uneven from public.kiosk_sightings where license_key = '${key}'`);
    expect(row.uneven).toBeGreaterThan(0);
  });

  it("another account's holder sees neither, even asking for it", async () => {
    expect(await asRole("authenticated", `select * from public.kiosk_status where license_key = '${key}'`, OTHER_USER)).toEqual([]);
    expect(await asRole("authenticated", `select license_key from public.seat_suspicions where license_key = '${key}'`, OTHER_USER)).toEqual([]);
  });

  it("holders read no staff evidence (suspected_copies) and no settings; anon reads nothing", async () => {
    for (const relation of ["public.suspected_copies", "public.seat_watch"]) {
      await expect(asRole("authenticated", `select * from ${relation}`)).rejects.toMatchObject({ code: "42501" });
    }
    for (const relation of ["public.seat_suspicions", "public.suspected_copies", "public.kiosk_sightings"]) {
      await expect(asRole("anon", `select * from ${relation}`)).rejects.toMatchObject({ code: "42501" });
    }
  });
});
