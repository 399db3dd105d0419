import { readdirSync, readFileSync } from "node:fs";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

// The migration that stores one payload per schedule (20261125000100_schedule_payloads.sql) runs on
// a deployment that already serves kiosks: a database migrated up to the one before it, with the
// demo data and an account of 1,000 keys, polled without pause while it is applied.

const root = new URL("../../", import.meta.url);
const migrations = new URL("supabase/migrations/", root);
const FIRST_NEW = "20261125000100";
const files = readdirSync(migrations).filter((file) => file.endsWith(".sql")).sort();
const before = files.filter((file) => file < FIRST_NEW);
const after = files.filter((file) => file >= FIRST_NEW);
const KEYS = [
  ...["0001", "0002", "0003", "0004", "0005"].map((n) => `DEMO-0000-0000-${n}`),
  ...Array.from({ length: 1000 }, (_, n) => `CHAN-0000-0000-${String(n).padStart(4, "0")}`),
];
/** The poll's statement, as API instances deployed before and after the migration send it. */
const POLL = "select s.n, s.fingerprint, s.payload::text as body from cadence.license_schedules_if_changed($1::text[], $2::text[]) as s";

let sql: postgres.Sql;
let adminUrl: string;
const name = `migration_${process.pid}_${Date.now()}`;

async function apply(file: string): Promise<void> {
  const body = readFileSync(new URL(file, migrations), "utf8");
  await sql.begin((tx) => tx.unsafe(body));
}

beforeAll(async () => {
  adminUrl = inject("pgAdminUrl");
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  sql = postgres(adminUrl.replace(/\/postgres$/, `/${name}`), { max: 6, onnotice: () => {} });
  await sql.unsafe(readFileSync(new URL("sql/supabase-shim.sql", root), "utf8"));
  for (const file of before) await apply(file);
  await sql.unsafe(readFileSync(new URL("supabase/seed.sql", root), "utf8"));
  await sql.unsafe(
    `insert into public.license_keys (key, account_id, email)
     select k, 'a0000000-0000-4000-8000-000000000001', 'demo@example.com' from unnest($1::text[]) as k`,
    [KEYS.slice(5)],
  );
});

afterAll(async () => {
  await sql.end();
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
});

describe("the migration to one payload per schedule, on a deployment in use", () => {
  it("keeps every kiosk's answer and ETag while it runs and after, polled without pause", async () => {
    const versionsBefore = new Map(
      (await sql.unsafe<{ license_key: string; version: string }[]>("select license_key, version from public.license_schedule_payloads"))
        .map((row) => [row.license_key, row.version]),
    );
    const payloadsBefore = await sql.unsafe<{ n: string; body: string }[]>(POLL, [KEYS, KEYS.map(() => null)]);
    expect(payloadsBefore).toHaveLength(KEYS.length);

    let polling = true;
    const failures: string[] = [];
    let polls = 0;
    const pollers = Array.from({ length: 4 }, async () => {
      while (polling) {
        try {
          const rows = await sql.unsafe<{ n: string; body: string }[]>(POLL, [KEYS, KEYS.map(() => null)]);
          if (rows.length !== KEYS.length) failures.push(`${rows.length} rows for ${KEYS.length} keys`);
          polls++;
        } catch (error) {
          failures.push(error instanceof Error ? error.message : String(error));
        }
      }
    });
    for (const file of after) await apply(file);
    polling = false;
    await Promise.all(pollers);
    expect(failures).toEqual([]);
    expect(polls).toBeGreaterThan(0);

    const payloadsAfter = await sql.unsafe<{ n: string; fingerprint: string; body: string }[]>(POLL, [KEYS, KEYS.map(() => null)]);
    const byN = new Map(payloadsBefore.map((row) => [row.n, JSON.parse(row.body)]));
    for (const row of payloadsAfter) {
      const key = KEYS[Number(row.n) - 1];
      expect(row.fingerprint, key).toBe(versionsBefore.get(key));
      expect(JSON.parse(row.body), key).toEqual(byN.get(row.n));
    }
  });
});
