import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryMailer } from "../support/mailer.ts";
import { ONBOARDING_PATH, SECRET, signedInit } from "../support/onboarding.ts";
import { testApp, unlimitedLimiter } from "../support/app.ts";
import { freshDatabase, type TestDatabase } from "../support/database.ts";

/** Rounds per race: a few in `npm test`, many in `npm run test:soak`. */
const ROUNDS = process.env.SOAK ? 50 : 5;
const PARALLEL = 20;

let database: TestDatabase;
let request: ReturnType<typeof testApp>["request"];
const mail = memoryMailer();

beforeAll(async () => {
  database = await freshDatabase({ max: PARALLEL + 4 });
  ({ request } = testApp(database.db, { limiter: unlimitedLimiter, signingSecret: SECRET, mailer: mail.mailer }));
});
afterAll(() => database.drop());

const post = (path: string, body: unknown, method = "POST") =>
  request(path, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe(`races, each run ${ROUNDS} times with ${PARALLEL} parallel requests over a pool of real connections`, () => {
  it("PUT /api/v2/licenses/{licenseKey}/system-name and POST /api/v2/license from two keys of one account: one name holder", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const name = `Race Kiosk ${round}`;
      const statuses = await Promise.all(
        Array.from({ length: PARALLEL }, async (_, i) => {
          const key = i % 2 ? "DEMO-0000-0000-0001" : "DEMO-0000-0000-0002";
          const variant = i % 4 < 2 ? name : name.toUpperCase();
          if (i % 3 === 0) {
            const response = await post("/api/v2/license", { license_key: key, email_address: "demo@example.com", systemName: variant });
            return `${response.status} ${(await response.json()).systemNameStatus}`;
          }
          return String((await post(`/api/v2/licenses/${key}/system-name`, { systemName: variant }, "PUT")).status);
        }),
      );
      expect(statuses.every((status) => ["200", "409", "200 ok", "200 conflict"].includes(status)), statuses.join()).toBe(true);
      const holders = await database.db.query<{ key: string }>(
        "select key from public.license_keys where lower(system_name) = lower($1)",
        [name],
      );
      expect(holders).toHaveLength(1);
    }
  });

  it("POST /api/v2/automations/create/account for one new e-mail in parallel: one account, a key and an e-mail per 200", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const email = `race-${round}@example.com`;
      const responses = await Promise.all(
        Array.from({ length: PARALLEL }, async (_, i) =>
          request(ONBOARDING_PATH, await signedInit({ email: i % 2 ? email : email.toUpperCase() }, { nowMs: Date.now() })),
        ),
      );
      expect(responses.map((response) => response.status)).toEqual(Array(PARALLEL).fill(200));
      const [counts] = await database.db.query<{ accounts: number; keys: number; emails: number }>(
        `select (select count(*)::int from public.accounts where lower(email) = $1) as accounts,
                (select count(*)::int from public.license_keys k join public.accounts a on a.id = k.account_id where lower(a.email) = $1) as keys,
                (select count(*)::int from public.email_outbox where recipient = $1) as emails`,
        [email],
      );
      expect(counts).toEqual({ accounts: 1, keys: PARALLEL, emails: PARALLEL });
    }
  });

  it("POST /api/v2/automations/create/account replayed in parallel: one accepted nonce", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const init = await signedInit({ email: `replay-${round}@example.com` }, { nowMs: Date.now() });
      const responses = await Promise.all(Array.from({ length: PARALLEL }, () => request(ONBOARDING_PATH, { ...init })));
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses).toEqual([200, ...Array(PARALLEL - 1).fill(401)]);
    }
  });

  it("POST /api/v2/license in parallel: every validation answers 200 and lastValidatedAt is recorded", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const [{ before }] = await database.db.query<{ before: Date }>("select clock_timestamp() as before");
      const responses = await Promise.all(
        Array.from({ length: PARALLEL }, () => post("/api/v2/license", { license_key: "DEMO-0000-0000-0004", email_address: "other@example.com" })),
      );
      expect(responses.map((response) => response.status)).toEqual(Array(PARALLEL).fill(200));
      const [{ validated }] = await database.db.query<{ validated: Date }>(
        "select last_validated_at as validated from public.license_keys where key = 'DEMO-0000-0000-0004'",
      );
      expect(validated.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
    }
  });
});

describe("a batch of system names the database aborts because of another transaction (a deadlock, a serialization failure)", () => {
  // A trigger in a scratch schema makes the batch's UPDATE fail as Postgres fails the victim of a
  // lock cycle, for one name only, so the other tests of this file never meet it.
  it.each([
    ["40P01", "deadlock_detected"],
    ["40001", "serialization_failure"],
  ])("PUT /api/v2/licenses/{licenseKey}/system-name and POST /api/v2/license answer 503 with Retry-After on %s (%s), never 500", async (_, condition) => {
    const name = `Aborted Kiosk ${condition}`;
    await database.db.script(`
      create schema if not exists scratch;
      create or replace function scratch.abort_batch() returns trigger language plpgsql as $$
      begin
        raise exception using errcode = '${condition}', message = 'the batch is aborted by the test';
      end $$;
      create trigger abort_batch before update of system_name on public.license_keys
        for each row when (new.system_name = '${name}') execute function scratch.abort_batch();`);
    try {
      const put = await post("/api/v2/licenses/DEMO-0000-0000-0001/system-name", { systemName: name }, "PUT");
      const validation = await post("/api/v2/license", { license_key: "DEMO-0000-0000-0002", email_address: "demo@example.com", systemName: name });
      for (const response of [put, validation]) {
        expect(response.status).toBe(503);
        expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
        expect(await response.json()).toEqual({ message: "service temporarily unavailable" });
      }
      const holders = await database.db.query("select key from public.license_keys where system_name = $1", [name]);
      expect(holders).toHaveLength(0);
    } finally {
      await database.db.script("drop trigger abort_batch on public.license_keys; drop schema scratch cascade;");
    }
  });
});

describe("a batch of system names takes its locks in one order: its keys in key order, and no lock of its own (cadence.set_system_names)", () => {
  it("waits for a key it may write holding no later key and no advisory lock, even when the key's first position asks its stored name", async () => {
    const [first, second] = ["DEMO-0000-0000-0001", "DEMO-0000-0000-0002"];
    await database.db.query("update public.license_keys set system_name = $2 where key = $1", [first, "Lock Order One"]);
    await database.db.query("update public.license_keys set system_name = null where key = $1", [second]);
    const holder = new pg.Client(database.url);
    const batch = new pg.Client(database.url);
    await Promise.all([holder.connect(), batch.connect()]);
    try {
      await holder.query("begin");
      await holder.query("select from public.license_keys where key = $1 for update", [first]);
      const [{ pid }] = (await batch.query<{ pid: number }>("select pg_backend_pid() as pid")).rows;
      // The first key: its stored name, then the same name in capitals (a second pass); the second key: a new name.
      const running = batch.query<{ n: string; outcome: string }>("select n, outcome from cadence.set_system_names($1, $2) order by n", [
        [first, first, second],
        ["Lock Order One", "LOCK ORDER ONE", "Lock Order Two"],
      ]);
      await expect.poll(async () => (await database.db.query("select from pg_stat_activity where pid = $1 and wait_event_type = 'Lock'", [pid])).length).toBe(1);
      // While it waits for the first key it holds neither the second key nor any advisory lock.
      expect(await database.db.query("select key from public.license_keys where key = $1 for update skip locked", [second])).toHaveLength(1);
      expect(await database.db.query("select from pg_locks where pid = $1 and locktype = 'advisory'", [pid])).toHaveLength(0);
      await holder.query("rollback");
      expect((await running).rows.map((row) => row.outcome)).toEqual(["unchanged", "ok", "ok"]);
    } finally {
      await Promise.all([holder.end(), batch.end()]);
    }
  });
});
