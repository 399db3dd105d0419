import postgres from "postgres";
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { scopedDatabase } from "../support/database.ts";

// Every change to an account or a license key is one event, recorded in the transaction that made
// it, whoever made it; the bookkeeping a kiosk writes on every call is none
// (supabase/schemas/14_events.sql).

const database = scopedDatabase();
let db: Database;

beforeAll(() => {
  db = database.db;
});

let counter = 0;
const newEmail = () => `events${++counter}.${process.pid}@example.com`;
const newKey = () => `EVNT-${String(++counter).padStart(4, "0")}-${String(process.pid % 10000).padStart(4, "0")}-0001`;

async function accountWithKey(options: { systemName?: string } = {}) {
  const email = newEmail();
  const key = newKey();
  const [account] = await db.query<{ id: string }>("insert into public.accounts (email, display_name) values ($1, 'Events') returning id", [email]);
  await db.query("insert into public.license_keys (key, account_id, email, system_name) values ($1, $2, $3, $4)", [key, account.id, email, options.systemName ?? null]);
  return { email, key, accountId: account.id };
}

interface EventRow {
  type: string;
  sequence: number;
  account_id: string | null;
  previous_account_id: string | null;
  data: Record<string, unknown>;
}

/** A key's events, in order. */
const keyEvents = (key: string) =>
  db.query<EventRow>(
    "select type, sequence::integer as sequence, account_id, previous_account_id, data from public.events where license_key = $1 order by sequence",
    [key],
  );

/** An account's own events, in order. */
const accountEvents = (accountId: string) =>
  db.query<EventRow>(
    "select type, sequence::integer as sequence, account_id, previous_account_id, data from public.events where account_id = $1 and license_key is null order by sequence",
    [accountId],
  );

const types = (events: EventRow[]) => events.map((event) => `${event.sequence} ${event.type}`);

describe("account and key events from every writer", () => {
  it("onboarding records account.created and license_key.created, each number 1 of its stream", async () => {
    const email = newEmail();
    const key = newKey();
    const [onboarded] = await db.query<{ account_id: string }>(
      "select account_id from cadence.onboard($1, 'Ada', $2, 's', 't', 'h', now())",
      [email, key],
    );
    expect(types(await accountEvents(onboarded.account_id))).toEqual(["1 account.created"]);
    const [created] = await keyEvents(key);
    expect(created).toMatchObject({ type: "license_key.created", sequence: 1, account_id: onboarded.account_id });
    expect(created.data).toMatchObject({ license_key: key, account_id: onboarded.account_id, active: true, email });
  });

  it("the lifecycle functions record one event per change, and a repeat that changes nothing records none", async () => {
    const { key } = await accountWithKey();
    await db.query("select * from cadence.suspend_license_key($1)", [key]);
    await db.query("select * from cadence.suspend_license_key($1)", [key]);
    await db.query("select * from cadence.reinstate_license_key($1)", [key]);
    expect(types(await keyEvents(key))).toEqual(["1 license_key.created", "2 license_key.suspended", "3 license_key.reinstated"]);
  });

  it("a move is one license_key.moved naming both accounts; the stored e-mail it rewrites is part of it", async () => {
    const from = await accountWithKey();
    const to = await accountWithKey();
    await db.query("select * from cadence.move_license_key($1, $2)", [from.key, to.email]);
    const [, moved, ...rest] = await keyEvents(from.key);
    expect(moved).toMatchObject({ type: "license_key.moved", sequence: 2, account_id: to.accountId, previous_account_id: from.accountId });
    expect(moved.data).toMatchObject({ account_id: to.accountId, email: to.email });
    expect(rest).toEqual([]);
  });

  it("a move refused (its system name is taken there) records nothing", async () => {
    const from = await accountWithKey({ systemName: "Lobby" });
    const to = await accountWithKey({ systemName: "lobby" });
    const [outcome] = await db.query<{ outcome: string }>("select outcome from cadence.move_license_key($1, $2)", [from.key, to.email]);
    expect(outcome.outcome).toBe("name_taken");
    expect(types(await keyEvents(from.key))).toEqual(["1 license_key.created"]);
  });

  it("an e-mail change is one account.email_changed with the previous e-mail; linking its keys is no key event", async () => {
    const { accountId, email, key } = await accountWithKey();
    const unlinked = newKey();
    await db.query("insert into public.license_keys (key, email) values ($1, $2)", [unlinked, email]);
    const newAddress = newEmail();
    await db.query("select * from cadence.change_account_email($1, $2)", [email, newAddress]);
    const [, changed] = await accountEvents(accountId);
    expect(changed).toMatchObject({ type: "account.email_changed", sequence: 2, data: { email: newAddress, previous_email: email } });
    expect(types(await keyEvents(key))).toEqual(["1 license_key.created"]);
    expect(types(await keyEvents(unlinked))).toEqual(["1 license_key.created"]);
  });

  it("a dashboard edit is an event as well, one per kind of change, numbered in the order of cadence.key_event_types", async () => {
    const { key } = await accountWithKey();
    await db.query("update public.license_keys set active = false, time_zone = 'Europe/Berlin', alerts_muted = true where key = $1", [key]);
    const events = await keyEvents(key);
    expect(types(events)).toEqual(["1 license_key.created", "2 license_key.suspended", "3 license_key.updated"]);
    expect(events[2].data).toMatchObject({ changed: ["time_zone", "alerts_muted"], time_zone: "Europe/Berlin", alerts_muted: true });
  });

  it("an account's name, zone or alert threshold changed is one account.updated naming what changed", async () => {
    const { accountId } = await accountWithKey();
    await db.query("update public.accounts set display_name = 'Renamed', offline_alert_after = interval '30 minutes' where id = $1", [accountId]);
    const [, updated] = await accountEvents(accountId);
    expect(updated).toMatchObject({
      type: "account.updated",
      data: { display_name: "Renamed", offline_alert_after_seconds: 1800, changed: ["display_name", "offline_alert_after"] },
    });
  });

  it("an account created with the e-mail of unlinked keys records their move into it", async () => {
    const email = newEmail();
    const key = newKey();
    await db.query("insert into public.license_keys (key, email) values ($1, $2)", [key, email]);
    const [account] = await db.query<{ id: string }>("insert into public.accounts (email, display_name) values ($1, 'Late') returning id", [email]);
    const [created, moved] = await keyEvents(key);
    expect(created).toMatchObject({ type: "license_key.created", account_id: null });
    expect(moved).toMatchObject({ type: "license_key.moved", account_id: account.id, previous_account_id: null });
  });

  it("a deleted key records license_key.deleted, and a key created again under its name continues its numbers", async () => {
    const email = newEmail();
    const key = newKey();
    await db.query("insert into public.license_keys (key, email) values ($1, $2)", [key, email]);
    await db.query("delete from public.license_keys where key = $1", [key]);
    await db.query("insert into public.license_keys (key, email) values ($1, $2)", [key, email]);
    expect(types(await keyEvents(key))).toEqual(["1 license_key.created", "2 license_key.deleted", "3 license_key.created"]);
  });

  it("an insert that meets a conflict and does nothing records no event", async () => {
    const { key, email } = await accountWithKey();
    await db.query("insert into public.license_keys (key, email) values ($1, $2) on conflict do nothing", [key, email]);
    expect(types(await keyEvents(key))).toEqual(["1 license_key.created"]);
  });

  it("a failed transaction leaves no event behind", async () => {
    const { key } = await accountWithKey();
    // One transaction: the change, then a statement that fails.
    await expect(db.script(`update public.license_keys set active = false where key = '${key}'; select 1 / 0;`)).rejects.toThrow(/division by zero/);
    expect(types(await keyEvents(key))).toEqual(["1 license_key.created"]);
  });
});

describe("what a kiosk writes", () => {
  it("its first validation is license_key.first_validated; the later ones are bookkeeping", async () => {
    const { key, email } = await accountWithKey();
    for (let i = 0; i < 3; i++) await db.query("select * from cadence.validate_license($1, $2)", [key, email]);
    expect(types(await keyEvents(key))).toEqual(["1 license_key.created", "2 license_key.first_validated"]);
  });

  it("a system name it sets is license_key.system_name_changed; sending the same name again is none", async () => {
    const { key } = await accountWithKey();
    await db.query("select cadence.set_system_name($1, 'Front desk')", [key]);
    await db.query("select cadence.set_system_name($1, 'Front desk')", [key]);
    const events = await keyEvents(key);
    expect(types(events)).toEqual(["1 license_key.created", "2 license_key.system_name_changed"]);
    expect(events[1].data).toMatchObject({ system_name: "Front desk" });
  });

  it("its sightings record no event", async () => {
    const { key } = await accountWithKey();
    await db.query("select cadence.record_kiosk_sightings(array[$1], array[now()], array['192.0.2.1'::inet], array[null::text])", [key]);
    expect(types(await keyEvents(key))).toEqual(["1 license_key.created"]);
  });
});

describe("operational facts", () => {
  it("an outage the offline-alert pass records is kiosk.offline, and its end kiosk.online", async () => {
    const { key, accountId } = await accountWithKey();
    const [outage] = await db.query<{ id: string }>(
      `insert into public.kiosk_outages (license_key, account_id, dark_since, last_seen_at, alerted_at)
       values ($1, $2, now() - interval '20 minutes', now() - interval '20 minutes', now()) returning id`,
      [key, accountId],
    );
    await db.query("update public.kiosk_outages set alert_email_id = gen_random_uuid() where id = $1", [outage.id]);
    await db.query("update public.kiosk_outages set back_at = now(), recovered_at = now() where id = $1", [outage.id]);
    const events = await keyEvents(key);
    expect(types(events)).toEqual(["1 license_key.created", "2 kiosk.offline", "3 kiosk.online"]);
    expect(events[1].data).toMatchObject({ outage_id: outage.id, license_key: key });
  });

  it("a key the seat checks flag is license_key.copy_suspected once, and again only after a day without a flag", async () => {
    const { key } = await accountWithKey();
    const flag = (at: string) =>
      db.query(
        `insert into public.seat_suspicions as q (license_key, rules, first_flagged_at, last_flagged_at) values ($1, array['uneven_polls'], $2, $2)
         on conflict (license_key) do update set last_flagged_at = excluded.last_flagged_at, flags = q.flags + 1`,
        [key, at],
      );
    await flag("2026-12-01T10:00:00Z");
    await flag("2026-12-01T10:01:00Z");
    await flag("2026-12-03T10:00:00Z");
    expect(types(await keyEvents(key))).toEqual(["1 license_key.created", "2 license_key.copy_suspected", "3 license_key.copy_suspected"]);
  });
});

describe("sequence numbers", () => {
  it("concurrent changes of one key from several connections get consecutive numbers, none twice", async () => {
    const { key } = await accountWithKey();
    const connections = Array.from({ length: 4 }, () => postgres(database.url, { max: 1, onnotice: () => {} }));
    try {
      await Promise.all(
        connections.map(async (sql, i) => {
          for (let n = 0; n < 10; n++) await sql`update public.license_keys set time_zone = ${n % 2 ? "UTC" : `Etc/GMT-${i + 1}`} where key = ${key}`;
        }),
      );
    } finally {
      await Promise.all(connections.map((sql) => sql.end()));
    }
    const numbers = (await keyEvents(key)).map((event) => event.sequence);
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
    const [row] = await db.query<{ events_sequence: number }>("select events_sequence::integer as events_sequence from public.license_keys where key = $1", [key]);
    expect(row.events_sequence).toBe(numbers.length);
  });
});
