/// <reference lib="deno.ns" />
// `npm run bench -- --seats [--keys=100000] [--rounds=9] [--copied=0.01]`: what the seat checks cost
// at fleet size. On a fresh throwaway Postgres 15 with that many keys, each already sighted three to
// six times (a quarter settling their polls at any write), vacuumed: the sightings write of a batch of keys as it was
// before the seat checks (the old statement, restored in the bench's database only) beside the write
// carrying the evidence, alternately, each round a minute later: each key's poll (its schedule and
// proclamations read, 0.6 s apart), and for a share of them (copied) a second device's poll 17 s
// later, half of those from an IPv6 /64 (each burst with its network's tag, as the API writes it);
// then the seat-check pass every minute would run. Each statement's cost is taken twice: its wall
// time and the CPU time of the database backend that ran it (/proc/<pid>/stat: on a shared machine
// the CPU time moves less than the wall time). Prints the writes' means (a write's cost depends on
// how many of its keys settle) and the pass's median, and the cost per day, at a kiosk polling every
// 60 s (each key written once a minute: 1,440 writes a day).
import { readFileSync } from "node:fs";
import pg from "pg";
import { pollNetwork } from "../../functions/app/kiosk/poll-network.ts";
import { POLL_GAP_MS } from "../../functions/app/kiosk/sightings.ts";
import { cpuSeconds } from "./cpu.ts";
import { migratedDatabase } from "./database.ts";
import type { BenchFlags } from "./flags.ts";

/** Keys per write: what one instance flushes in 5 s when 100,000 keys poll once a minute. */
const BATCH = 8_000;
const MINUTE = 60_000;

/** The write as it was before the seat checks, taken from its migration. */
function oldWrite(): string {
  const migration = readFileSync(new URL("../../supabase/migrations/20261122001110_kiosk_sightings.sql", import.meta.url), "utf8");
  const start = migration.indexOf("create function cadence.record_kiosk_sightings");
  const end = migration.indexOf("$$;", start) + 3;
  return migration.slice(start, end).replace("cadence.record_kiosk_sightings", "public.bench_old_record_kiosk_sightings");
}

const seatKey = (n: number) => {
  const digits = String(n).padStart(12, "0");
  return `SEAT-${digits.slice(0, 4)}-${digits.slice(4, 8)}-${digits.slice(8)}`;
};
const ipOf = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
/** A copied key's second device: an IPv4 address for half of them, an IPv6 /64 for the other half. */
const otherIpOf = (n: number) => (n % 2 ? `12.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` : `fd00:0:${(n >> 16).toString(16)}:${(n & 0xffff).toString(16)}::1`);
/** A poll's calls, first to last; the second device's poll of a copied key this long after the first's. */
const POLL_MS = 600;
const SECOND_DEVICE_MS = 17_000;
const median = (values: number[]) => values.toSorted((a, b) => a - b)[values.length >> 1];
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const mean = (values: number[]) => sum(values) / values.length;

export async function measureSeatChecks(flags: Pick<BenchFlags, "keys" | "rounds" | "copied">): Promise<void> {
  if ((flags.keys?.length ?? 0) > 1) throw new Error("npm run bench -- --seats: --keys=N, one fleet size");
  const keys = flags.keys?.[0] ?? 100_000;
  const rounds = flags.rounds ?? 9;
  const copiedShare = flags.copied ?? 0.01;
  const copied = (n: number) => Math.floor((n + 1) * copiedShare) > Math.floor(n * copiedShare);
  const database = await migratedDatabase();
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const [{ pid }] = (await client.query<{ pid: number }>("select pg_backend_pid() as pid")).rows;
    const all = Array.from({ length: keys }, (_, n) => seatKey(n));
    await client.query(
      `insert into public.license_keys (key, account_id, email)
       select k, a.id, a.email from unnest($1::text[]) as k, public.accounts as a where a.email = 'demo@example.com'`,
      [all],
    );
    await client.query(oldWrite());
    const start = Date.now() - 10 * MINUTE;
    const at = (round: number, ms = 0) => new Date(start + round * MINUTE + ms).toISOString();
    /** Writes keys number `ns` as seen in `round`, with the write of `fn`. */
    const write = (fn: "new" | "old", ns: number[], round: number) => {
      const batch = ns.map((n) => all[n]);
      // The latest call of each key: its own poll's last, or a copied key's second device's.
      const ips = ns.map((n) => (copied(n) ? otherIpOf(n) : ipOf(n)));
      const times = ns.map((n) => at(round, copied(n) ? SECOND_DEVICE_MS + POLL_MS : POLL_MS));
      if (fn === "old") {
        return client.query("select public.bench_old_record_kiosk_sightings($1::text[], $2::timestamptz[], $3::inet[], $4::text[])", [batch, times, ips, batch.map(() => null)]);
      }
      // Each key's bursts: its own poll's, and a copied key's second device's.
      const counts = ns.map((n) => (copied(n) ? 2 : 1));
      const starts = counts.flatMap((count) => (count === 2 ? [0, SECOND_DEVICE_MS] : [0]));
      const networks = ns.flatMap((n) => (copied(n) ? [pollNetwork(ipOf(n)), pollNetwork(otherIpOf(n))] : [pollNetwork(ipOf(n))]));
      let next = 1;
      return client.query(
        `select cadence.record_kiosk_polls($1::text[], $2::timestamptz[], $3::inet[], $4::text[], $5::text[], $6::text[], $7::integer[],
           $8::interval, $9::integer[], $10::integer[], $11::timestamptz[], $12::timestamptz[], $13::boolean[], $14::integer[])`,
        [batch, times, ips, batch.map(() => null), batch.map(() => null), batch.map(() => null), batch.map(() => 0),
          `${POLL_GAP_MS} milliseconds`, counts.map((count) => (next += count) - count), counts,
          starts.map((ms) => at(round, ms)), starts.map((ms) => at(round, ms + POLL_MS)), starts.map(() => false), networks],
      );
    };
    /** Runs `work`, returning its wall time and the backend's CPU time, in ms. */
    const timed = async (work: () => Promise<unknown>) => {
      const cpu = cpuSeconds(pid);
      const began = performance.now();
      await work();
      return { wallMs: performance.now() - began, cpuMs: (cpuSeconds(pid) - cpu) * 1000 };
    };
    // A fleet that has run for a while: each key sighted three to six times, a minute apart, so
    // that a quarter of the keys (copied or not) settle their polls at any one write (a write
    // settles them once it holds six bursts), as in a fleet whose keys started at their own
    // moments; then vacuumed, as autovacuum keeps a table updated this often.
    const range = (from: number, count: number) => Array.from({ length: Math.max(0, Math.min(count, keys - from)) }, (_, i) => from + i);
    const phase = (n: number) => Math.floor(n / 100) % 4;
    for (let round = 0; round < 6; round++) {
      for (let from = 0; from < keys; from += BATCH) await write("new", range(from, BATCH).filter((n) => round >= phase(n)), round);
    }
    await client.query("vacuum analyze public.license_keys, public.kiosk_sightings");
    const old: { wallMs: number; cpuMs: number }[] = [];
    const withEvidence: { wallMs: number; cpuMs: number }[] = [];
    for (let round = 6; round < rounds + 6; round++) {
      const batch = range((round * BATCH) % Math.max(1, keys - BATCH), BATCH);
      for (const fn of round % 2 ? (["old", "new"] as const) : (["new", "old"] as const)) {
        (fn === "old" ? old : withEvidence).push(await timed(() => write(fn, batch, round)));
      }
    }
    const passes: { wallMs: number; cpuMs: number }[] = [];
    for (let round = 0; round < rounds; round++) {
      passes.push(await timed(() => client.query("select cadence.seat_check_pass($1::timestamptz)", [at(rounds + 6 + round)])));
    }
    const [size] = (await client.query<{ sightings: string; uneven: number; polls: number }>(
      `select pg_size_pretty(pg_total_relation_size('public.kiosk_sightings')) as sightings,
              (select count(*)::int from public.kiosk_sightings where (polls).uneven_this_hour > 0) as uneven,
              (select avg(pg_column_size(polls))::int from public.kiosk_sightings) as polls`,
    )).rows;
    const writesPerDay = keys * 1_440;
    /** Seconds a day of `runs` (each a batch of keys), at every key written once a minute. */
    const perDay = (runs: { wallMs: number; cpuMs: number }[], field: "wallMs" | "cpuMs") =>
      Math.round((sum(runs.map((run) => run[field])) / (runs.length * BATCH)) * writesPerDay / 1000);
    console.log(JSON.stringify({
      keys,
      copiedKeys: all.filter((_, n) => copied(n)).length,
      keysWithUnevenPolls: size.uneven,
      batch: BATCH,
      rounds,
      writeMeanMs: {
        before: { wall: Math.round(mean(old.map((run) => run.wallMs))), cpu: Math.round(mean(old.map((run) => run.cpuMs))) },
        withEvidence: { wall: Math.round(mean(withEvidence.map((run) => run.wallMs))), cpu: Math.round(mean(withEvidence.map((run) => run.cpuMs))) },
      },
      passMs: { wall: Math.round(median(passes.map((run) => run.wallMs))), cpu: Math.round(median(passes.map((run) => run.cpuMs))) },
      databaseCpuSecondsPerDay: {
        sightingsBefore: perDay(old, "cpuMs"),
        sightingsWithEvidence: perDay(withEvidence, "cpuMs"),
        evidence: perDay(withEvidence, "cpuMs") - perDay(old, "cpuMs"),
        pass: Math.round(sum(passes.map((run) => run.cpuMs)) / passes.length * 1_440 / 1000),
      },
      wallSecondsPerDay: {
        sightingsBefore: perDay(old, "wallMs"),
        sightingsWithEvidence: perDay(withEvidence, "wallMs"),
        pass: Math.round(median(passes.map((run) => run.wallMs)) * 1_440 / 1000),
      },
      tableSize: { sightings: size.sightings, pollsBytesPerKey: size.polls },
    }, null, 2));
  } finally {
    await client.end();
    await database.server.stop();
  }
}
