import postgres from "postgres";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { DatabaseUnavailable } from "../../functions/app/db/unavailable.ts";
import { kioskSightings, type SightingsWriter } from "../../functions/app/kiosk/sightings.ts";
import { memoryLogger, testApp } from "../support/app.ts";
import { testClock } from "../support/clock.ts";
import { scopedDatabase } from "../support/database.ts";
import { startServer } from "../support/server.ts";

// The demo data: demo@example.com owns keys 1-3 (1 and 3 read its daily schedule, 2 its own weekly
// one; 3 is inactive), other@example.com key 4, legacy@example.com key 5 (no owner link).
const KEY = {
  demoDaily: "DEMO-0000-0000-0001",
  demoWeekly: "DEMO-0000-0000-0002",
  demoInactive: "DEMO-0000-0000-0003",
  other: "DEMO-0000-0000-0004",
  legacy: "DEMO-0000-0000-0005",
} as const;
const DEMO_MORNING_BLOCK = "d0000000-0000-4000-8000-000000000001";
const json = { "content-type": "application/json" };

/** Counts the sightings statements a writer sends, and can make the next ones fail as an outage. */
function watched(db: Database) {
  const writes: string[][] = [];
  let outages = 0;
  const watchedDb: Database = {
    query(text, params, options) {
      if (text.includes("record_kiosk_polls")) {
        if (outages > 0) {
          outages -= 1;
          return Promise.reject(new DatabaseUnavailable("paused by the test"));
        }
        writes.push(params![0] as string[]);
      }
      return db.query(text, params, options);
    },
    script: (text) => db.script(text),
    close: () => db.close(),
  };
  return { db: watchedDb, writes, failNext: (count: number) => (outages = count) };
}

interface StatusRow {
  license_key: string;
  account_email: string | null;
  system_name: string | null;
  active: boolean;
  seen_ms: number | null;
  last_seen_ip: string | null;
  schedule_version_held: string | null;
  schedule_version_current: string;
  schedule_is_current: boolean | null;
  state: "never_seen" | "online" | "offline";
}

/** public.kiosk_status of one key, as staff read it (the database owner). */
async function statusOf(db: Database, key: string): Promise<StatusRow> {
  const [row] = await db.query<StatusRow>(
    `select license_key, account_email, system_name, active,
            (extract(epoch from last_seen_at) * 1000)::float8 as seen_ms, host(last_seen_ip) as last_seen_ip,
            schedule_version_held, schedule_version_current, schedule_is_current, state
       from public.kiosk_status where license_key = $1`,
    [key],
  );
  return row;
}

const etagOf = (response: Response) => response.headers.get("etag")!.replaceAll('"', "");

describe("kiosk sightings: every call a kiosk makes with its key records when, from where, and the version it holds", () => {
  const database = scopedDatabase();
  const clock = testClock();
  let sightings: SightingsWriter;
  let request: ReturnType<typeof testApp>["request"];

  beforeAll(async () => {
    // Written only when a test flushes: the timer's interval is longer than the suite.
    sightings = kioskSightings({ db: database.db, now: clock.now, log: memoryLogger().log, flushEveryMs: 3_600_000, perKeyMs: 0 });
    ({ request } = testApp(database.db, { now: clock.now, sightings }));
  });
  afterAll(async () => {
    await sightings.close();
  });

  const from = (ip: string, init: RequestInit = {}) => ({ ...init, headers: { ...init.headers as Record<string, string>, "x-forwarded-for": ip } });
  /** A license validation of `key` by `email`, from `ip`. */
  const validate = (key: string, email: string, ip: string) =>
    request("/api/v2/license", from(ip, { method: "POST", headers: json, body: JSON.stringify({ license_key: key, email_address: email }) }));

  it("a license validation: the key, the time and the client IP, and no version", async () => {
    const response = await validate(KEY.demoDaily, "demo@example.com", "198.51.100.10");
    expect(response.status).toBe(200);
    await sightings.flush();
    const status = await statusOf(database.db, KEY.demoDaily);
    expect(status).toMatchObject({ state: "online", last_seen_ip: "198.51.100.10", schedule_version_held: null, schedule_is_current: null });
    expect(status.seen_ms).toBe(clock.now());
  });

  it("the license schedule read: the version sent in the 200", async () => {
    const response = await request(`/api/v2/licenses/${KEY.demoWeekly}/schedule`, from("198.51.100.11"));
    expect(response.status).toBe(200);
    await sightings.flush();
    const status = await statusOf(database.db, KEY.demoWeekly);
    expect(status).toMatchObject({ last_seen_ip: "198.51.100.11", schedule_version_held: etagOf(response), schedule_is_current: true });
  });

  it("the license schedule read answered 304: the version its If-None-Match named", async () => {
    const current = etagOf(await request(`/api/v2/licenses/${KEY.demoDaily}/schedule`));
    await sightings.flush();
    await database.db.query("update public.kiosk_sightings set schedule_version_held = null where license_key = $1", [KEY.demoDaily]);
    const response = await request(`/api/v2/licenses/${KEY.demoDaily}/schedule`, from("198.51.100.12", { headers: { "if-none-match": `W/"${current}"` } }));
    expect(response.status).toBe(304);
    await sightings.flush();
    expect(await statusOf(database.db, KEY.demoDaily)).toMatchObject({ last_seen_ip: "198.51.100.12", schedule_version_held: current });
  });

  it("the legacy schedule read: the version sent", async () => {
    const response = await request(`/api/v2/schedule?email=legacy@example.com&key=${KEY.legacy}`, from("198.51.100.13"));
    expect(response.status).toBe(200);
    const { version } = await response.json();
    await sightings.flush();
    expect(await statusOf(database.db, KEY.legacy)).toMatchObject({ last_seen_ip: "198.51.100.13", schedule_version_held: version, schedule_is_current: true });
  });

  it("the system-name write: the key and the client IP", async () => {
    const response = await request(`/api/v2/licenses/${KEY.other}/system-name`, from("2001:DB8::14", {
      method: "PUT",
      headers: json,
      body: JSON.stringify({ systemName: "Front desk" }),
    }));
    expect(response.status).toBe(200);
    await sightings.flush();
    expect(await statusOf(database.db, KEY.other)).toMatchObject({ system_name: "Front desk", last_seen_ip: "2001:db8::14" });
  });

  it("the entitled proclamations read: the key and the client IP", async () => {
    const response = await request("/api/v2/proclamations", from("198.51.100.15", { headers: { "x-license-key": KEY.demoInactive, "x-email": "demo@example.com" } }));
    expect(response.status).toBe(200);
    await sightings.flush();
    expect(await statusOf(database.db, KEY.demoInactive)).toMatchObject({ last_seen_ip: "198.51.100.15", state: "online" });
  });

  it("a call refused (an unpaired e-mail, a wrong key) records nothing", async () => {
    const before = await statusOf(database.db, KEY.legacy);
    clock.advance(1_000);
    expect((await request(`/api/v2/schedule?email=demo@example.com&key=${KEY.legacy}`, from("198.51.100.16"))).status).toBe(400);
    expect((await request("/api/v2/proclamations", from("198.51.100.16", { headers: { "x-license-key": KEY.legacy, "x-email": "other@example.com" } }))).status).toBe(400);
    const validation = await validate(KEY.legacy, "other@example.com", "198.51.100.16");
    expect(validation.status).toBe(400);
    await sightings.flush();
    expect(await statusOf(database.db, KEY.legacy)).toEqual(before);
  });

  it("a later call that carries no schedule keeps the version held; the latest call's time and IP win", async () => {
    const held = (await statusOf(database.db, KEY.demoWeekly)).schedule_version_held;
    clock.advance(2_000);
    const response = await validate(KEY.demoWeekly, "demo@example.com", "198.51.100.17");
    expect(response.status).toBe(200);
    await sightings.flush();
    const status = await statusOf(database.db, KEY.demoWeekly);
    expect(status).toMatchObject({ schedule_version_held: held, last_seen_ip: "198.51.100.17" });
    expect(status.seen_ms).toBe(clock.now());
  });

  it("the client IP comes from where the rate limits take it, and an unknown one is recorded as null", async () => {
    const { request: bySocket } = testApp(database.db, { now: clock.now, sightings, clientIpSource: false });
    expect((await bySocket(`/api/v2/licenses/${KEY.other}/schedule`, from("198.51.100.18"))).status).toBe(200);
    await sightings.flush();
    expect((await statusOf(database.db, KEY.other)).last_seen_ip).toBe("127.0.0.1");
    expect((await request(`/api/v2/licenses/${KEY.other}/schedule`, from("not-an-address"))).status).toBe(200);
    await sightings.flush();
    expect((await statusOf(database.db, KEY.other)).last_seen_ip).toBeNull();
  });
});

describe("writing sightings: coalesced per instance, off the request path", () => {
  const database = scopedDatabase();
  const clock = testClock();
  let open: SightingsWriter[] = [];

  afterEach(async () => {
    await Promise.all(open.map((writer) => writer.close()));
    open = [];
  });

  function writer(db: Database, options: { flushEveryMs?: number; keepAlive?: (work: Promise<unknown>) => void } = {}) {
    const created = kioskSightings({ db, now: clock.now, log: memoryLogger().log, flushEveryMs: 3_600_000, ...options });
    open.push(created);
    return created;
  }

  it("many calls of several keys: one statement, carrying each key once with its latest call", async () => {
    const { db, writes } = watched(database.db);
    const sightings = writer(db);
    const { request } = testApp(database.db, { now: clock.now, sightings });
    const keys = [KEY.demoDaily, KEY.demoWeekly, KEY.other];
    for (let i = 0; i < 30; i += 1) {
      const key = keys[i % 3];
      const answer = await request(`/api/v2/licenses/${key}/schedule`, { headers: { "x-forwarded-for": `198.51.100.${100 + i}` } });
      expect(answer.status).toBe(200);
    }
    expect(writes).toEqual([]);
    await sightings.flush();
    expect(writes).toHaveLength(1);
    expect([...writes[0]].sort()).toEqual([...keys].sort());
    expect((await statusOf(database.db, KEY.other)).last_seen_ip).toBe("198.51.100.129");
  });

  it("a key at most once per 30 s: a sighting within that waits, and is written once 30 s have passed", async () => {
    const { db, writes } = watched(database.db);
    const sightings = writer(db);
    sightings.saw(KEY.legacy, "198.51.100.20");
    await sightings.flush();
    clock.advance(10_000);
    sightings.saw(KEY.legacy, "198.51.100.21");
    sightings.saw(KEY.demoInactive, "198.51.100.22");
    await sightings.flush();
    expect(writes).toEqual([[KEY.legacy], [KEY.demoInactive]]);
    expect((await statusOf(database.db, KEY.legacy)).last_seen_ip).toBe("198.51.100.20");
    clock.advance(19_999);
    await sightings.flush();
    expect(writes).toHaveLength(2);
    clock.advance(1);
    await sightings.flush();
    expect(writes).toEqual([[KEY.legacy], [KEY.demoInactive], [KEY.legacy]]);
    expect((await statusOf(database.db, KEY.legacy)).last_seen_ip).toBe("198.51.100.21");
  });

  it("writes by itself, a few seconds after the first sighting, and hands that write to keepAlive (EdgeRuntime.waitUntil)", async () => {
    const { db, writes } = watched(database.db);
    const kept: Promise<unknown>[] = [];
    const sightings = writer(db, { flushEveryMs: 50, keepAlive: (work) => kept.push(work) });
    sightings.saw(KEY.demoWeekly, "198.51.100.30");
    sightings.saw(KEY.demoDaily, "198.51.100.31");
    expect(kept).toHaveLength(1);
    await kept[0];
    expect(writes.map((keys) => [...keys].sort())).toEqual([[KEY.demoDaily, KEY.demoWeekly]]);
    expect((await statusOf(database.db, KEY.demoDaily)).last_seen_ip).toBe("198.51.100.31");
  });

  it("a write scheduled while one runs hands keepAlive its own promise, settled once that write is done", async () => {
    const { db, writes } = watched(database.db);
    // Each write starts, then waits until the test lets it finish.
    let started!: () => void;
    const writing = new Promise<void>((resolve) => (started = resolve));
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const slow: Database = { ...db, query: async (text, params, options) => {
      started();
      await finished;
      return db.query(text, params, options);
    } };
    const kept: Promise<unknown>[] = [];
    const sightings = writer(slow, { flushEveryMs: 20, keepAlive: (work) => kept.push(work) });
    sightings.saw(KEY.demoWeekly, "198.51.100.32");
    await writing;
    // The first write is under way: this sighting schedules the next.
    sightings.saw(KEY.legacy, "198.51.100.33");
    expect(kept).toHaveLength(2);
    finish();
    await kept[0];
    expect(writes).toEqual([[KEY.demoWeekly]]);
    await kept[1];
    expect(writes).toEqual([[KEY.demoWeekly], [KEY.legacy]]);
  });

  it("while the database is unavailable, keeps what it saw for the next write", async () => {
    const { db, writes, failNext } = watched(database.db);
    const sightings = writer(db);
    clock.advance(60_000);
    sightings.saw(KEY.other, "198.51.100.40", { version: "a".repeat(64) });
    failNext(1);
    await sightings.flush();
    expect(writes).toEqual([]);
    sightings.saw(KEY.other, "198.51.100.41");
    await sightings.flush();
    expect(writes).toEqual([[KEY.other]]);
    expect(await statusOf(database.db, KEY.other)).toMatchObject({ last_seen_ip: "198.51.100.41", schedule_version_held: "a".repeat(64) });
  });

  it("at close, writes everything it still holds, however recently its key was written", async () => {
    const { db, writes } = watched(database.db);
    const sightings = writer(db);
    sightings.saw(KEY.demoWeekly, "198.51.100.50");
    await sightings.flush();
    sightings.saw(KEY.demoWeekly, "198.51.100.51");
    await sightings.close();
    expect(writes).toEqual([[KEY.demoWeekly], [KEY.demoWeekly]]);
    expect((await statusOf(database.db, KEY.demoWeekly)).last_seen_ip).toBe("198.51.100.51");
  });

  it("between instances, the latest sighting wins whichever writes last, and a key that does not exist is skipped", async () => {
    const early = writer(database.db);
    const late = writer(database.db);
    clock.advance(60_000);
    late.saw(KEY.legacy, "198.51.100.61");
    await late.flush();
    clock.advance(-5_000);
    early.saw(KEY.legacy, "198.51.100.60");
    early.saw("ZZZZ-0000-0000-0000", "198.51.100.60");
    await early.flush();
    expect((await statusOf(database.db, KEY.legacy)).last_seen_ip).toBe("198.51.100.61");
    expect(await database.db.query("select 1 from public.kiosk_sightings where license_key = 'ZZZZ-0000-0000-0000'")).toEqual([]);
  });
});

describe("public.kiosk_status", () => {
  const database = scopedDatabase();
  let sql: postgres.Sql;

  beforeAll(async () => {
    sql = postgres(database.url, { max: 2, onnotice: () => {} });
  });
  afterAll(async () => {
    await sql.end();
  });

  /** Sightings written through a writer on a test clock set `agoMs` in the past. */
  async function seenAgo(key: string, agoMs: number, ip = "198.51.100.70", version?: string) {
    const clock = testClock(Date.now() - agoMs);
    const sightings = kioskSightings({ db: database.db, now: clock.now, log: memoryLogger().log });
    sightings.saw(key, ip, { version });
    await sightings.close();
  }

  it("has one row per license key, with the columns staff filter and sort by", async () => {
    const rows = await database.db.query<Record<string, unknown>>("select * from public.kiosk_status order by license_key");
    expect(rows.map((row) => row.license_key)).toEqual(Object.values(KEY).sort());
    expect(Object.keys(rows[0])).toEqual([
      "license_key", "account_email", "system_name", "active", "last_validated_at", "last_seen_at", "last_seen_ip",
      "schedule_version_held", "schedule_version_current", "schedule_is_current", "state", "time_zone", "local_time", "playing_now",
      "dark_since", "suspected_copy",
    ]);
  });

  it("shows each kiosk's time zone, its local time and the block it should be playing now, or none", async () => {
    // Whatever the time of day: key 2's weekly schedule gets a whole-day block on every weekday
    // (there is a Sunday one already); key 4 reads no schedule.
    const days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];
    await database.db.query("delete from public.schedule_blocks where schedule_id = (select id from public.schedules where license_key = $1) and weekday <> 'sunday'", [KEY.demoWeekly]);
    await database.db.query(
      "insert into public.schedule_blocks (schedule_id, weekday, start_time, end_time) select s.id, d, '00:00', '24:00' from public.schedules s, unnest($2::text[]) d where s.license_key = $1",
      [KEY.demoWeekly, days],
    );
    await database.db.query("update public.license_keys set time_zone = 'Pacific/Chatham' where key = $1", [KEY.demoWeekly]);
    const rows = await database.db.query<{ license_key: string; time_zone: string; local_is_now: boolean; start: string | null; end: string | null }>(
      `select license_key, time_zone, local_time = now() at time zone time_zone as local_is_now,
              playing_now ->> 'startTime' as start, playing_now ->> 'endTime' as end
         from public.kiosk_status where license_key in ($1, $2) order by license_key`,
      [KEY.demoWeekly, KEY.other],
    );
    expect(rows).toEqual([
      { license_key: KEY.demoWeekly, time_zone: "Pacific/Chatham", local_is_now: true, start: "00:00", end: "24:00" },
      { license_key: KEY.other, time_zone: "UTC", local_is_now: true, start: null, end: null },
    ]);
  });

  it("names each key's owner by the pairing rule: the owner link, else the stored e-mail", async () => {
    const owners = await database.db.query<{ license_key: string; account_email: string | null }>(
      "select license_key, account_email from public.kiosk_status order by license_key",
    );
    expect(owners).toEqual([
      { license_key: KEY.demoDaily, account_email: "demo@example.com" },
      { license_key: KEY.demoWeekly, account_email: "demo@example.com" },
      { license_key: KEY.demoInactive, account_email: "demo@example.com" },
      { license_key: KEY.other, account_email: "other@example.com" },
      { license_key: KEY.legacy, account_email: "legacy@example.com" },
    ]);
    await sql`insert into public.license_keys (key, email) values ('ORPH-0000-0000-0001', 'nobody@example.com')`;
    try {
      expect(await statusOf(database.db, "ORPH-0000-0000-0001")).toMatchObject({ account_email: null, state: "never_seen" });
    } finally {
      await sql`delete from public.license_keys where key = 'ORPH-0000-0000-0001'`;
    }
  });

  it("state: never_seen, then online for 15 minutes after the last call, offline after", async () => {
    expect((await statusOf(database.db, KEY.other)).state).toBe("never_seen");
    await seenAgo(KEY.other, 15 * 60_000 - 10_000);
    expect((await statusOf(database.db, KEY.other)).state).toBe("online");
    await seenAgo(KEY.legacy, 15 * 60_000 + 10_000);
    expect((await statusOf(database.db, KEY.legacy)).state).toBe("offline");
  });

  it("state at the edge: online up to 15 minutes (the default offline_alert_after), offline from exactly 15 minutes, as the offline alerts count it", async () => {
    const states = await sql.begin(async (tx) => {
      // One transaction: now() is one instant for the writes and the reads.
      await tx`update public.kiosk_sightings set last_seen_at = now() - interval '14 minutes 59.999 seconds' where license_key = ${KEY.other}`;
      const [before] = await tx`select state from public.kiosk_status where license_key = ${KEY.other}`;
      await tx`update public.kiosk_sightings set last_seen_at = now() - interval '15 minutes' where license_key = ${KEY.other}`;
      const [atEdge] = await tx`select state from public.kiosk_status where license_key = ${KEY.other}`;
      return [before.state, atEdge.state];
    });
    expect(states).toEqual(["online", "offline"]);
  });

  it("state follows the account's offline_alert_after, the threshold of the offline alerts, so the two never disagree", async () => {
    const rollback = new Error("rollback");
    let states: string[] = [];
    await sql.begin(async (tx) => {
      await tx`update public.accounts set offline_alert_after = interval '1 minute' where id = cadence.license_key_owner(${KEY.other})`;
      await tx`update public.kiosk_sightings set last_seen_at = now() - interval '59 seconds' where license_key = ${KEY.other}`;
      const [within] = await tx`select state from public.kiosk_status where license_key = ${KEY.other}`;
      await tx`update public.kiosk_sightings set last_seen_at = now() - interval '2 minutes' where license_key = ${KEY.other}`;
      const [past] = await tx`select state from public.kiosk_status where license_key = ${KEY.other}`;
      // What the offline-alert pass takes as unseen for the account's threshold (cadence.kiosk_alert_pass's stale set).
      const [alertRule] = await tx`
        select s.last_seen_at <= now() - a.offline_alert_after as unseen
          from public.kiosk_sightings as s join public.accounts as a on a.id = cadence.license_key_owner(s.license_key)
         where s.license_key = ${KEY.other}`;
      await tx`update public.accounts set offline_alert_after = interval '1 hour' where id = cadence.license_key_owner(${KEY.other})`;
      const [longer] = await tx`select state from public.kiosk_status where license_key = ${KEY.other}`;
      states = [within.state, past.state, alertRule.unseen ? "unseen" : "seen", longer.state];
      throw rollback;
    }).catch((error) => {
      if (error !== rollback) throw error;
    });
    expect(states).toEqual(["online", "offline", "unseen", "online"]);
  });

  it("schedule_version_current is the ETag the API serves, for every key and schedule kind", async () => {
    const { request } = testApp(database.db);
    for (const key of Object.values(KEY)) {
      const response = await request(`/api/v2/licenses/${key}/schedule`);
      expect((await statusOf(database.db, key)).schedule_version_current, key).toBe(etagOf(response));
    }
  });

  it("schedule_is_current: true while the kiosk holds the current version, false once staff change the schedule, null if it never read one", async () => {
    const { request } = testApp(database.db);
    const served = etagOf(await request(`/api/v2/licenses/${KEY.demoDaily}/schedule`));
    await seenAgo(KEY.demoDaily, 1_000, "198.51.100.71", served);
    await seenAgo(KEY.demoInactive, 1_000, "198.51.100.72");
    expect((await statusOf(database.db, KEY.demoDaily)).schedule_is_current).toBe(true);
    expect((await statusOf(database.db, KEY.demoInactive)).schedule_is_current).toBeNull();
    await database.db.query("update public.schedule_blocks set dynamic_audio = not dynamic_audio where id = $1", [DEMO_MORNING_BLOCK]);
    const status = await statusOf(database.db, KEY.demoDaily);
    expect(status.schedule_is_current).toBe(false);
    expect(status.schedule_version_current).toBe(etagOf(await request(`/api/v2/licenses/${KEY.demoDaily}/schedule`)));
  });

  it("forgets a deleted key's sighting", async () => {
    await sql`insert into public.license_keys (key, email) values ('GONE-0000-0000-0001', 'demo@example.com')`;
    await seenAgo("GONE-0000-0000-0001", 1_000);
    expect((await statusOf(database.db, "GONE-0000-0000-0001")).state).toBe("online");
    await sql`delete from public.license_keys where key = 'GONE-0000-0000-0001'`;
    expect(await database.db.query("select 1 from public.kiosk_sightings where license_key = 'GONE-0000-0000-0001'")).toEqual([]);
  });

  describe("through Supabase's Data API (security invoker: each reader's own privileges and policies)", () => {
    const DEMO_USER = "e0000000-0000-4000-8000-000000000001";
    const DEMO_ACCOUNT = "a0000000-0000-4000-8000-000000000001";

    /** Runs `query` as the Data API runs a request: a transaction as `role`, with the JWT claims. */
    async function asRole(role: "anon" | "authenticated", query: string) {
      const claims = role === "anon" ? { role } : { sub: DEMO_USER, role };
      return sql.begin(async (tx) => {
        await tx.unsafe(`set local role ${role}`);
        await tx`select set_config('request.jwt.claims', ${JSON.stringify(claims)}, true)`;
        return [...await tx.unsafe(query)];
      });
    }

    beforeAll(async () => {
      await sql`update public.accounts set auth_user_id = ${DEMO_USER} where id = ${DEMO_ACCOUNT}`;
      for (const key of Object.values(KEY)) await seenAgo(key, 1_000);
    });

    it("an account holder sees the rows of their own keys, complete", async () => {
      const rows = await asRole("authenticated", "select license_key, account_email, state, schedule_version_current from public.kiosk_status order by license_key");
      expect(rows.map((row) => row.license_key)).toEqual([KEY.demoDaily, KEY.demoWeekly, KEY.demoInactive]);
      for (const row of rows) {
        expect(row).toMatchObject({ account_email: "demo@example.com", state: "online" });
        expect(row.schedule_version_current).toMatch(/^[0-9a-f]{64}$/);
      }
    });

    it("an account holder sees no key of another account, even asking for it", async () => {
      expect(await asRole("authenticated", `select * from public.kiosk_status where license_key in ('${KEY.other}', '${KEY.legacy}')`)).toEqual([]);
      expect(await asRole("authenticated", `select * from public.kiosk_sightings where license_key = '${KEY.other}'`)).toEqual([]);
    });

    it("anon sees nothing: no privilege on the view or what it reads", async () => {
      for (const relation of ["public.kiosk_status", "public.kiosk_sightings"]) {
        await expect(asRole("anon", `select * from ${relation}`)).rejects.toMatchObject({ code: "42501" });
      }
    });
  });
});

describe("kiosk status from the real entry (Deno)", () => {
  const own = scopedDatabase();

  it("records calls without being asked, and what it still holds when it stops", async () => {
    // Written every 200 ms rather than SIGHTINGS_FLUSH_MS's 5 s: the test waits for the write, not the time.
    const server = await startServer({ ...own.serverEnv, SIGHTINGS_FLUSH_MS: "200" });
    try {
      const response = await fetch(`${server.url}/api/v2/licenses/${KEY.demoWeekly}/schedule`);
      expect(response.status).toBe(200);
      const validation = await fetch(`${server.url}/api/v2/license`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ license_key: KEY.legacy, email_address: "legacy@example.com" }),
      });
      expect(validation.status).toBe(200);
      while ((await statusOf(own.db, KEY.legacy)).state !== "online") await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await statusOf(own.db, KEY.demoWeekly)).toMatchObject({ state: "online", schedule_version_held: etagOf(response), schedule_is_current: true });
      expect((await statusOf(own.db, KEY.legacy)).state).toBe("online");
      await fetch(`${server.url}/api/v2/licenses/${KEY.other}/schedule`);
    } finally {
      await server.stop();
    }
    expect((await statusOf(own.db, KEY.other)).state).toBe("online");
  });
});
