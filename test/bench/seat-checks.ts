/// <reference lib="deno.ns" />
// `npm run bench -- --seats [--keys=100000] [--rounds=7]`: what the seat checks cost at fleet size.
// On a fresh throwaway Postgres 15 with that many keys, each already sighted once: the sightings
// write of a batch of keys as it was before the seat checks (the old statement, restored in the
// bench's database only) beside the write carrying the evidence, alternately, each round a minute
// later; then the seat-check pass every minute would run. Prints medians and the cost per day, at a
// kiosk polling every 60 s (each key written once a minute: 1,440 writes a day).
import { readFileSync } from "node:fs";
import pg from "pg";
import { migratedDatabase } from "./database.ts";

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
const median = (values: number[]) => values.toSorted((a, b) => a - b)[values.length >> 1];

export async function measureSeatChecks(args: string[]): Promise<void> {
  const keys = Number(args.find((arg) => arg.startsWith("--keys="))?.slice(7) ?? 100_000);
  const rounds = Number(args.find((arg) => arg.startsWith("--rounds="))?.slice(9) ?? 7);
  const database = await migratedDatabase();
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const all = Array.from({ length: keys }, (_, n) => seatKey(n));
    await client.query(
      `insert into public.license_keys (key, account_id, email)
       select k, a.id, a.email from unnest($1::text[]) as k, public.accounts as a where a.email = 'demo@example.com'`,
      [all],
    );
    await client.query(oldWrite());
    const start = Date.now() - 10 * MINUTE;
    const at = (round: number) => new Date(start + round * MINUTE).toISOString();
    const write = (fn: "new" | "old", from: number, count: number, round: number) => {
      const batch = all.slice(from, from + count);
      const ips = batch.map((_, i) => ipOf(from + i));
      const times = batch.map(() => at(round));
      if (fn === "old") {
        return client.query("select public.bench_old_record_kiosk_sightings($1::text[], $2::timestamptz[], $3::inet[], $4::text[])", [batch, times, ips, batch.map(() => null)]);
      }
      return client.query(
        `select cadence.record_kiosk_sightings($1::text[], $2::timestamptz[], $3::inet[], $4::text[], $5::integer[], $6::text[], $7::text[],
           $8::integer[], $9::text[], $10::cidr[], $11::timestamptz[], $12::timestamptz[], $13::integer[], $14::integer[])`,
        [batch, times, ips, batch.map(() => null), batch.map(() => 1), batch.map(() => null), batch.map(() => null), batch.map(() => 0),
          batch, ips, times, times, batch.map(() => 1), batch.map(() => 0)],
      );
    };
    // Every key sighted once, with its network, as a fleet that has run for a while.
    for (let from = 0; from < keys; from += BATCH) await write("new", from, BATCH, 0);
    await client.query("analyze public.license_keys, public.kiosk_sightings, public.kiosk_networks");
    const old: number[] = [];
    const withEvidence: number[] = [];
    for (let round = 1; round <= rounds; round++) {
      const from = (round * BATCH) % Math.max(1, keys - BATCH);
      for (const fn of round % 2 ? (["old", "new"] as const) : (["new", "old"] as const)) {
        const began = performance.now();
        await write(fn, from, BATCH, round);
        (fn === "old" ? old : withEvidence).push(performance.now() - began);
      }
    }
    const passes: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const began = performance.now();
      await client.query("select cadence.seat_check_pass($1::timestamptz)", [at(rounds + 1)]);
      passes.push(performance.now() - began);
    }
    const [size] = (await client.query<{ networks: string; sightings: string }>(
      `select pg_size_pretty(pg_total_relation_size('public.kiosk_networks')) as networks,
              pg_size_pretty(pg_total_relation_size('public.kiosk_sightings')) as sightings`,
    )).rows;
    const extraPerKeyMs = (median(withEvidence) - median(old)) / BATCH;
    const writesPerDay = keys * 1_440;
    console.log(JSON.stringify({
      keys,
      batch: BATCH,
      rounds,
      writeOldMs: Math.round(median(old)),
      writeWithEvidenceMs: Math.round(median(withEvidence)),
      extraMsPerKeyWrite: Number(extraPerKeyMs.toFixed(4)),
      passMs: Math.round(median(passes)),
      perDay: {
        writeSecondsBefore: Math.round((median(old) / BATCH) * writesPerDay / 1000),
        writeSecondsWithEvidence: Math.round((median(withEvidence) / BATCH) * writesPerDay / 1000),
        passSeconds: Math.round(median(passes) * 1_440 / 1000),
      },
      tableSize: size,
    }, null, 2));
  } finally {
    await client.end();
    await database.server.stop();
  }
}
