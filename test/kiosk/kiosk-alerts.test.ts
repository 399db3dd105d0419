import postgres from "postgres";
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { openPostgres } from "../../functions/app/db/postgres.ts";
import { alertOfflineKiosks } from "../../functions/app/kiosk/offline-alerts.ts";
import { consoleMailer } from "../../functions/app/mail/console-mailer.ts";
import { kioskAlertEmail } from "../../functions/app/mail/kiosk-alert-email.ts";
import { runScheduledPass } from "../../functions/app/scheduled-pass.ts";
import { memoryLogger } from "../support/app.ts";
import { testClock, utcDayStart } from "../support/clock.ts";
import { scopedDatabase } from "../support/database.ts";
import { memoryMailer } from "../support/mailer.ts";

// The offline alerts on a test clock that starts at 01:00 UTC of the real day: every sighting and
// every pass is timed by it, and the rules they meet are those of
// supabase/migrations/20261125000520_kiosk_offline_alerts.sql. The file moves the clock about two
// and a half hours; started at the real time, after about 21:30 UTC it crossed midnight, where a
// whole-day block starts again and gives every kiosk its threshold anew (no alert where the tests
// expect one). Each test uses an account of its own (threshold 5 minutes); a heartbeat kiosk with
// no schedule keeps Cadence from looking blind.

const MINUTE = 60_000;
const HEARTBEAT = "BEAT-0000-0000-0001";

const database = scopedDatabase();
let db: Database;
const clock = testClock(utcDayStart() + 60 * MINUTE);
const mail = memoryMailer();
const logger = memoryLogger();
const ports = () => ({ db, mailer: mail.mailer, now: clock.now, log: logger.log });
let accounts = 0;

const iso = (ms: number) => new Date(ms).toISOString();

/** Kiosks calling now: their sightings, as the API writes them. */
async function seen(keys: string[], at = clock.now()) {
  await db.query("select cadence.record_kiosk_polls($1::text[], $2::timestamptz[], $3::inet[], $4::text[])", [
    keys,
    keys.map(() => iso(at)),
    keys.map(() => null),
    keys.map(() => null),
  ]);
}

/** A UTC wall-clock time of day, `HH:MM`, of an instant. */
const wallClock = (ms: number) => iso(ms).slice(11, 16);

/**
 * A new account (UTC, threshold 5 minutes) with `count` keys reading its daily schedule, which has
 * one block: the whole day unless `block` says otherwise. Every key is seen now.
 */
async function account(count: number, block = { start: "00:00", end: "24:00" }) {
  const n = ++accounts;
  const email = `alerts${n}@example.com`;
  const [{ id }] = await db.query<{ id: string }>(
    "insert into public.accounts (email, display_name, offline_alert_after) values ($1, $2, interval '5 minutes') returning id",
    [email, `Venue ${n}`],
  );
  const [{ id: schedule }] = await db.query<{ id: string }>("insert into public.schedules (account_id, type) values ($1, 'daily') returning id", [id]);
  await db.query("insert into public.schedule_blocks (schedule_id, start_time, end_time) values ($1, $2, $3)", [schedule, block.start, block.end]);
  const keys = Array.from({ length: count }, (_, i) => `AL${String(n).padStart(2, "0")}-0000-0000-${String(i + 1).padStart(4, "0")}`);
  for (const [i, key] of keys.entries()) {
    await db.query("insert into public.license_keys (key, account_id, email, system_name) values ($1, $2, $3, $4)", [key, id, email, `Screen ${i + 1}`]);
  }
  await seen(keys);
  return { id, email, keys };
}

/** The e-mails delivered to `email` so far. */
const mailTo = (email: string) => mail.sent.filter((message) => message.to === email);

/** Moves the clock a minute at a time over `minutes`, the heartbeat (and `alive`) calling, one scheduled run each minute. */
async function minutes(count: number, alive: string[] = []) {
  for (let i = 0; i < count; i++) {
    clock.advance(MINUTE);
    await seen([HEARTBEAT, ...alive]);
    await runScheduledPass(ports());
  }
}

beforeAll(async () => {
  db = database.db;
  await db.query("insert into public.license_keys (key, email) values ($1, 'heartbeat@example.com')", [HEARTBEAT]);
  await seen([HEARTBEAT]);
  // The first run starts the watch.
  await runScheduledPass(ports());
});

describe("offline alerts: a kiosk that should be playing and goes dark, and comes back", () => {
  it("unseen for the account's threshold: its holder gets one e-mail, in the run that finds it, and only one", async () => {
    const venue = await account(1);
    await minutes(4);
    expect(mailTo(venue.email)).toEqual([]);
    await minutes(1);
    expect(mailTo(venue.email)).toHaveLength(1);
    expect(mailTo(venue.email)[0].subject).toBe("Cadence: 1 kiosk offline");
    expect(mailTo(venue.email)[0].text).toContain(`Screen 1 (${venue.keys[0]}): not seen since`);
    await minutes(10);
    expect(mailTo(venue.email)).toHaveLength(1);
  });

  it("seen again: one more e-mail, and only one", async () => {
    const venue = await account(1);
    await minutes(5);
    expect(mailTo(venue.email)).toHaveLength(1);
    await minutes(1, venue.keys);
    expect(mailTo(venue.email).map((message) => message.subject)).toEqual(["Cadence: 1 kiosk offline", "Cadence: 1 kiosk back online"]);
    expect(mailTo(venue.email)[1].text).toContain(`Screen 1 (${venue.keys[0]}): seen again at`);
    await minutes(3, venue.keys);
    expect(mailTo(venue.email)).toHaveLength(2);
  });

  it("one e-mail per account per run lists every kiosk that changed: a venue losing power sends one message", async () => {
    const venue = await account(40);
    await minutes(5);
    expect(mailTo(venue.email)).toHaveLength(1);
    expect(mailTo(venue.email)[0].subject).toBe("Cadence: 40 kiosks offline");
    for (const key of venue.keys) expect(mailTo(venue.email)[0].text).toContain(key);
    await minutes(1, venue.keys);
    expect(mailTo(venue.email)[1].subject).toBe("Cadence: 40 kiosks back online");
  });

  it("none outside the kiosk's scheduled blocks", async () => {
    const later = clock.now() + 2 * 60 * MINUTE;
    const venue = await account(1, { start: wallClock(later), end: wallClock(later + 60 * MINUTE) });
    await minutes(10);
    expect(mailTo(venue.email)).toEqual([]);
  });

  it("a block's start gives the kiosk the whole threshold again: no alert the minute a silent kiosk's block begins", async () => {
    const start = Math.ceil((clock.now() + 10 * MINUTE) / MINUTE) * MINUTE;
    const venue = await account(1, { start: wallClock(start), end: wallClock(start + 60 * MINUTE) });
    await minutes(14);
    expect(mailTo(venue.email)).toEqual([]);
    await minutes(2);
    expect(mailTo(venue.email)).toHaveLength(1);
  });

  it("none for an inactive key, nor for a key its holder muted", async () => {
    const venue = await account(2);
    await db.query("update public.license_keys set active = false where key = $1", [venue.keys[0]]);
    await db.query("update public.license_keys set alerts_muted = true where key = $1", [venue.keys[1]]);
    await minutes(10);
    expect(mailTo(venue.email)).toEqual([]);
  });

  it("none for a key no kiosk has used yet", async () => {
    const venue = await account(1);
    await db.query("delete from public.kiosk_sightings where license_key = $1", [venue.keys[0]]);
    await minutes(10);
    expect(mailTo(venue.email)).toEqual([]);
  });

  it("none because Cadence was blind (no kiosk at all seen): kiosks get a full threshold once it sees again", async () => {
    const venue = await account(1);
    // The API is down: nothing is seen, while the runs go on.
    for (let i = 0; i < 8; i++) {
      clock.advance(MINUTE);
      await runScheduledPass(ports());
    }
    expect(mailTo(venue.email)).toEqual([]);
    expect(logger.lines.filter((line) => JSON.parse(line).event === "kiosk_alerts_blind")).toHaveLength(1);
    // Back: the other kiosks call again; this one stays dark, and is reported a threshold later.
    await minutes(4);
    expect(mailTo(venue.email)).toEqual([]);
    await minutes(2);
    expect(mailTo(venue.email)).toHaveLength(1);
  });

  it("none because Cadence was down (a gap in its runs): kiosks calling back late are not reported dark", async () => {
    const venue = await account(3);
    // Nothing runs for 20 minutes: no sighting, no pass. Then kiosks call back over the next minutes.
    clock.advance(20 * MINUTE);
    await seen([HEARTBEAT]);
    const report = await runScheduledPass(ports());
    expect(report.alerts).toMatchObject({ watchRestarted: true, wentDark: 0 });
    await minutes(2, [venue.keys[0]]);
    await minutes(2, venue.keys);
    expect(mailTo(venue.email)).toEqual([]);
  });

  it("a change recorded but not yet announced (a crash before the e-mail) is announced by the next run", async () => {
    const venue = await account(1);
    for (let i = 0; i < 5; i++) {
      clock.advance(MINUTE);
      await seen([HEARTBEAT]);
      // Only the recording half of the run, as a run that crashed before queueing would leave it.
      await db.query("select * from cadence.kiosk_alert_pass($1::timestamptz)", [iso(clock.now())]);
    }
    expect(mailTo(venue.email)).toEqual([]);
    await minutes(1);
    expect(mailTo(venue.email).map((message) => message.subject)).toEqual(["Cadence: 1 kiosk offline"]);
  });

  it("two runs at once (npm start beside a cron job) queue one e-mail", async () => {
    const venue = await account(2);
    await minutes(4);
    clock.advance(MINUTE);
    await seen([HEARTBEAT]);
    const second = openPostgres(database.url, { max: 2 });
    try {
      const reports = await Promise.all([alertOfflineKiosks(ports()), alertOfflineKiosks({ ...ports(), db: second })]);
      expect(reports.map((report) => report.emails).sort()).toEqual([0, 1]);
    } finally {
      await second.close();
    }
    await runScheduledPass(ports());
    expect(mailTo(venue.email)).toHaveLength(1);
  });

  it("an alert whose send fails stays in the outbox and goes out on a later run", async () => {
    const venue = await account(1);
    await minutes(4);
    mail.failNext(1);
    await minutes(1);
    expect(mailTo(venue.email)).toEqual([]);
    // The outbox retries a failed send after its backoff (1 minute first).
    await minutes(2);
    expect(mailTo(venue.email)).toHaveLength(1);
  });

  it("every alert and recovery is recorded, and kiosk_status shows since when a kiosk is dark", async () => {
    const venue = await account(1);
    const lastSeen = clock.now();
    await minutes(5);
    const [open] = await db.query<{ dark_since: Date; last_seen_at: Date; alerted_at: Date; back_at: Date | null }>(
      "select dark_since, last_seen_at, alerted_at, back_at from public.kiosk_outages where license_key = $1",
      [venue.keys[0]],
    );
    expect({ ...open, dark_since: +open.dark_since, last_seen_at: +open.last_seen_at, alerted_at: +open.alerted_at })
      .toEqual({ dark_since: lastSeen, last_seen_at: lastSeen, alerted_at: clock.now(), back_at: null });
    const [status] = await db.query<{ dark_since: Date }>("select dark_since from public.kiosk_status where license_key = $1", [venue.keys[0]]);
    expect(+status.dark_since).toBe(lastSeen);
    await minutes(1, venue.keys);
    const [closed] = await db.query<{ back_at: Date; recovery_email_id: string | null }>(
      "select back_at, recovery_email_id from public.kiosk_outages where license_key = $1",
      [venue.keys[0]],
    );
    expect(+closed.back_at).toBe(clock.now());
    expect(closed.recovery_email_id).not.toBeNull();
  });
});

describe("uptime over the last 30 days, as an account holder reads it (row-level security)", () => {
  it("each of their kiosks' outages, downtime and uptime; never another account's", async () => {
    const mine = await account(2);
    const theirs = await account(1);
    const user = "e0000000-0000-4000-8000-0000000000a1";
    await db.query("update public.accounts set auth_user_id = $1 where id = $2", [user, mine.id]);
    // Relative to the database's clock, which the view reads: one outage of 3 hours a week ago, one
    // of an hour half of which falls before the 30 days, and another account's.
    await db.query(
      `insert into public.kiosk_outages (license_key, account_id, dark_since, last_seen_at, alerted_at, back_at, recovered_at)
       values ($1, $3, now() - interval '7 days', now() - interval '7 days', now() - interval '7 days', now() - interval '7 days' + interval '3 hours', now() - interval '7 days' + interval '3 hours'),
              ($1, $3, now() - interval '30 days 30 minutes', now() - interval '30 days 30 minutes', now() - interval '30 days 30 minutes', now() - interval '29 days 23 hours 30 minutes', now() - interval '29 days 23 hours 30 minutes'),
              ($2, $4, now() - interval '1 day', now() - interval '1 day', now() - interval '1 day', now() - interval '20 hours', now() - interval '20 hours')`,
      [mine.keys[0], theirs.keys[0], mine.id, theirs.id],
    );
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      const rows = await sql.begin(async (tx) => {
        await tx.unsafe("set local role authenticated");
        await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: user, role: "authenticated" })}, true)`;
        return [...await tx.unsafe("select license_key, outages, extract(epoch from downtime)::int as downtime_s, uptime_percent::text from public.kiosk_uptime order by license_key")];
      });
      expect(rows).toEqual([
        { license_key: mine.keys[0], outages: 2, downtime_s: 3.5 * 3600, uptime_percent: "99.514" },
        { license_key: mine.keys[1], outages: 0, downtime_s: 0, uptime_percent: "100.000" },
      ]);
      // The outages themselves: their own keys' only, and never which e-mails announced them.
      const outages = await sql.begin(async (tx) => {
        await tx.unsafe("set local role authenticated");
        await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: user, role: "authenticated" })}, true)`;
        return [...await tx.unsafe("select license_key from public.kiosk_outages")];
      });
      expect(outages).toEqual([{ license_key: mine.keys[0] }, { license_key: mine.keys[0] }]);
      await expect(sql.begin(async (tx) => {
        await tx.unsafe("set local role authenticated");
        return await tx.unsafe("select alert_email_id from public.kiosk_outages");
      })).rejects.toMatchObject({ code: "42501" });
    } finally {
      await sql.end();
    }
  });
});

describe("the alert e-mail", () => {
  it("as the console mailer prints it: the account, every kiosk by name and key, local times and zone, the block", async () => {
    const printed: string[] = [];
    await consoleMailer((text) => printed.push(text)).send(kioskAlertEmail({
      to: "venue@example.com",
      name: "Harbour Café",
      changes: [
        {
          kind: "dark", licenseKey: "AB12-CD34-EF56-GH78", systemName: "Lobby", timeZone: "Europe/Berlin",
          lastSeenLocal: "2026-11-25 09:41", backLocal: null, block: { weekday: null, startTime: "08:00", endTime: "18:00" },
        },
        {
          kind: "back", licenseKey: "JK12-LM34-NP56-QR78", systemName: null, timeZone: "Europe/Berlin",
          lastSeenLocal: "2026-11-25 08:02", backLocal: "2026-11-25 09:55", block: null,
        },
      ],
    }));
    expect(printed[0]).toBe([
      "--- e-mail to venue@example.com",
      "Subject: Cadence: 1 kiosk offline, 1 kiosk back online",
      "",
      "Hello Harbour Café,",
      "",
      "Offline: these kiosks should be playing but have not called Cadence.",
      "  - Lobby (AB12-CD34-EF56-GH78): not seen since 2026-11-25 09:41 (Europe/Berlin), during its block 08:00-18:00",
      "",
      "Back online:",
      "  - JK12-LM34-NP56-QR78: seen again at 2026-11-25 09:55 (Europe/Berlin), after going dark following 2026-11-25 08:02",
      "",
      "You get one e-mail when a kiosk goes dark and one when it is back. To stop them for a kiosk, mute its alerts (license_keys.alerts_muted).",
      "--- end of e-mail",
    ].join("\n"));
  });

  it("escapes the account's and the kiosks' names in the HTML body", () => {
    const email = kioskAlertEmail({
      to: "venue@example.com",
      name: "<b>Venue</b>",
      changes: [{ kind: "dark", licenseKey: "AB12-CD34-EF56-GH78", systemName: "<script>", timeZone: "UTC", lastSeenLocal: "2026-11-25 09:41", backLocal: null, block: null }],
    });
    expect(email.html).not.toContain("<script>");
    expect(email.html).toContain("&lt;script&gt;");
    expect(email.html).toContain("&lt;b&gt;Venue&lt;/b&gt;");
  });
});

describe("a fleet never seen (a fresh demo)", () => {
  const fresh = scopedDatabase();
  const quiet = memoryLogger();

  it("is no outage: the pass says no kiosk has called yet, and warns of nothing", async () => {
    await runScheduledPass({ db: fresh.db, mailer: mail.mailer, now: clock.now, log: quiet.log });
    const events = quiet.lines.map((line) => JSON.parse(line) as { level: string; event: string });
    expect(events).toContainEqual(expect.objectContaining({ level: "info", event: "kiosk_alerts_waiting" }));
    expect(events.filter((line) => line.level === "warn")).toEqual([]);
  });
});
