import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { scopedDatabase } from "../support/database.ts";

// cadence.playing_at(keys, at) at fixed instants: every answer depends on the instant passed, never
// on the date the suite runs. The wall-clock rule and its daylight-saving cases are stated in
// supabase/migrations/20261125000510_what_plays_now.sql.

const database = scopedDatabase();
let db: Database;
let account: string;
let keys = 0;

beforeAll(async () => {
  db = database.db;
  [{ id: account }] = await db.query<{ id: string }>(
    "insert into public.accounts (email, display_name) values ('zones@example.com', 'Zones') returning id",
  );
});

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

interface Block {
  weekday?: string;
  start: string;
  end: string;
}

/** A new key of the test account with its own schedule of `blocks`, in `zone` (null: the account's). */
async function keyWith(zone: string | null, blocks: Block[], type: "daily" | "weekly" = "daily"): Promise<{ key: string; blocks: string[] }> {
  const key = `TZZZ-0000-0000-${String(++keys).padStart(4, "0")}`;
  await db.query("insert into public.license_keys (key, account_id, email, time_zone) values ($1, $2, 'zones@example.com', $3)", [key, account, zone]);
  const [{ id: schedule }] = await db.query<{ id: string }>("insert into public.schedules (license_key, type) values ($1, $2) returning id", [key, type]);
  const ids: string[] = [];
  for (const block of blocks) {
    const [{ id }] = await db.query<{ id: string }>(
      "insert into public.schedule_blocks (schedule_id, weekday, start_time, end_time) values ($1, $2, $3, $4) returning id",
      [schedule, block.weekday ?? null, block.start, block.end],
    );
    ids.push(id);
  }
  return { key, blocks: ids };
}

interface Playing {
  block_id: string | null;
  started_on: string | null;
  local_time: string;
  time_zone: string;
}

/** What `key` should play at instant `at` (epoch ms or ISO). */
async function playing(key: string, at: number | string): Promise<Playing> {
  const [row] = await db.query<Playing>(
    `select block_id, started_on::text as started_on, to_char(local_time, 'YYYY-MM-DD HH24:MI') as local_time, time_zone
       from cadence.playing_at(array[$1], $2::timestamptz)`,
    [key, new Date(at).toISOString()],
  );
  return row;
}

describe("what plays now: the block of each key's effective schedule at its local wall-clock time", () => {
  it("a key reads its account's schedule in its account's zone; its own zone wins", async () => {
    const [{ id: other }] = await db.query<{ id: string }>(
      "insert into public.accounts (email, display_name, time_zone) values ('tokyo@example.com', 'Tokyo', 'Asia/Tokyo') returning id",
    );
    const [{ id: schedule }] = await db.query<{ id: string }>("insert into public.schedules (account_id, type) values ($1, 'daily') returning id", [other]);
    const [{ id: block }] = await db.query<{ id: string }>(
      "insert into public.schedule_blocks (schedule_id, start_time, end_time) values ($1, '09:00', '10:00') returning id",
      [schedule],
    );
    await db.query(
      "insert into public.license_keys (key, account_id, email, time_zone) values ('TOKY-0000-0000-0001', $1, 'tokyo@example.com', null), ('TOKY-0000-0000-0002', $1, 'tokyo@example.com', 'Europe/London')",
      [other],
    );
    // 00:30 UTC is 09:30 in Tokyo and 00:30 in London.
    expect(await playing("TOKY-0000-0000-0001", "2026-11-23T00:30:00Z")).toMatchObject({ block_id: block, time_zone: "Asia/Tokyo", local_time: "2026-11-23 09:30" });
    expect(await playing("TOKY-0000-0000-0002", "2026-11-23T00:30:00Z")).toMatchObject({ block_id: null, time_zone: "Europe/London", local_time: "2026-11-23 00:30" });
    expect(await playing("TOKY-0000-0000-0002", "2026-11-23T09:30:00Z")).toMatchObject({ block_id: block });
  });

  it("none outside every block, and none for a key without a schedule", async () => {
    const { key } = await keyWith("UTC", [{ start: "09:00", end: "10:00" }]);
    expect((await playing(key, "2026-11-23T10:00:00Z")).block_id).toBeNull();
    expect((await playing(key, "2026-11-23T08:59:00Z")).block_id).toBeNull();
    expect((await playing("DEMO-0000-0000-0004", "2026-11-23T09:30:00Z")).block_id).toBeNull();
  });

  it("a block plays from its start (included) to its end (excluded), with its proclamations in order", async () => {
    const { key, blocks: [block] } = await keyWith("UTC", [{ start: "09:00", end: "10:00" }]);
    const [b, a] = ["b0000000-0000-4000-8000-000000000002", "b0000000-0000-4000-8000-000000000001"];
    await db.query("insert into public.schedule_block_proclamations (block_id, position, proclamation_id) values ($1, 1, $2), ($1, 2, $3), ($1, 3, $2)", [block, b, a]);
    const [row] = await db.query<{ block_id: string; proclamation_ids: string[]; start_time: string; end_time: string }>(
      "select block_id, proclamation_ids, start_time::text, end_time::text from cadence.playing_at(array[$1], '2026-11-23T09:00:00Z')",
      [key],
    );
    expect(row).toEqual({ block_id: block, proclamation_ids: [b, a, b], start_time: "09:00:00", end_time: "10:00:00" });
    expect((await playing(key, "2026-11-23T09:59:00Z")).block_id).toBe(block);
  });

  it("an overnight block crosses midnight: after midnight it is the block that started the day before", async () => {
    const { key, blocks: [block] } = await keyWith("UTC", [{ start: "22:00", end: "06:00" }]);
    expect(await playing(key, "2026-11-23T23:00:00Z")).toMatchObject({ block_id: block, started_on: "2026-11-23" });
    expect(await playing(key, "2026-11-24T05:59:00Z")).toMatchObject({ block_id: block, started_on: "2026-11-23" });
    expect((await playing(key, "2026-11-24T06:00:00Z")).block_id).toBeNull();
  });

  it("a weekly block on Sunday night runs into Monday, and only into Monday", async () => {
    // 2026-11-22 is a Sunday.
    const { key, blocks: [block] } = await keyWith("UTC", [{ weekday: "sunday", start: "22:00", end: "06:00" }], "weekly");
    expect(await playing(key, "2026-11-22T22:30:00Z")).toMatchObject({ block_id: block, started_on: "2026-11-22" });
    expect(await playing(key, "2026-11-23T03:00:00Z")).toMatchObject({ block_id: block, started_on: "2026-11-22" });
    expect((await playing(key, "2026-11-24T03:00:00Z")).block_id).toBeNull();
    expect((await playing(key, "2026-11-21T23:00:00Z")).block_id).toBeNull();
  });

  it("an end equal to the start is a whole day; 00:00-24:00 is every minute of the day", async () => {
    const { key: whole, blocks: [wholeBlock] } = await keyWith("UTC", [{ start: "20:00", end: "20:00" }]);
    expect(await playing(whole, "2026-11-23T19:59:00Z")).toMatchObject({ block_id: wholeBlock, started_on: "2026-11-22" });
    expect(await playing(whole, "2026-11-23T20:00:00Z")).toMatchObject({ block_id: wholeBlock, started_on: "2026-11-23" });
    const { key: day, blocks: [dayBlock] } = await keyWith("UTC", [{ start: "00:00", end: "24:00" }]);
    expect((await playing(day, "2026-11-23T00:00:00Z")).block_id).toBe(dayBlock);
    expect((await playing(day, "2026-11-23T23:59:00Z")).block_id).toBe(dayBlock);
  });

  it("when blocks overlap, the one that started last plays", async () => {
    const { key, blocks: [overnight, morning] } = await keyWith("UTC", [{ start: "22:00", end: "10:00" }, { start: "08:00", end: "09:00" }]);
    expect((await playing(key, "2026-11-23T07:00:00Z")).block_id).toBe(overnight);
    expect((await playing(key, "2026-11-23T08:30:00Z")).block_id).toBe(morning);
    expect((await playing(key, "2026-11-23T09:30:00Z")).block_id).toBe(overnight);
  });

  it("answers a whole account in one call, each key its schedule's block in its zone, unknown keys left out", async () => {
    const { key: utc, blocks: [utcBlock] } = await keyWith("UTC", [{ start: "09:00", end: "10:00" }]);
    const { key: kolkata } = await keyWith("Asia/Kolkata", [{ start: "09:00", end: "10:00" }]);
    const rows = await db.query<{ n: string; license_key: string; block_id: string | null }>(
      "select n, license_key, block_id from cadence.playing_at(array[$1, 'NOPE-0000-0000-0000', $2], '2026-11-23T09:15:00Z') order by n",
      [utc, kolkata],
    );
    expect(rows.map((row) => [Number(row.n), row.license_key, row.block_id])).toEqual([[1, utc, utcBlock], [3, kolkata, null]]);
  });
});

/** The daylight-saving changes of 2026 and 2027 the matrix covers, by the local date the clocks change. */
const TRANSITIONS: Record<string, Array<{ date: string; kind: "forward" | "back" }>> = {
  "America/New_York": [
    { date: "2026-03-08", kind: "forward" }, { date: "2026-11-01", kind: "back" },
    { date: "2027-03-14", kind: "forward" }, { date: "2027-11-07", kind: "back" },
  ],
  "Europe/Berlin": [
    { date: "2026-03-29", kind: "forward" }, { date: "2026-10-25", kind: "back" },
    { date: "2027-03-28", kind: "forward" }, { date: "2027-10-31", kind: "back" },
  ],
  "Australia/Sydney": [
    { date: "2026-04-05", kind: "back" }, { date: "2026-10-04", kind: "forward" },
    { date: "2027-04-04", kind: "back" }, { date: "2027-10-03", kind: "forward" },
  ],
  "Pacific/Chatham": [
    { date: "2026-04-05", kind: "back" }, { date: "2026-09-27", kind: "forward" },
    { date: "2027-04-04", kind: "back" }, { date: "2027-09-26", kind: "forward" },
  ],
  // No daylight saving: the control. The nights other zones change are ordinary nights here.
  "Asia/Kolkata": [],
};

interface Transition {
  /** The instant the clocks change (epoch ms). */
  at: number;
  /** The local date and the wall-clock times just before and just after it (HH:MM). */
  date: string;
  before: string;
  after: string;
}

/** Every instant of 2026 and 2027 at which `zone`'s clocks change, found by the database (15-minute steps). */
async function transitionsOf(zone: string): Promise<Transition[]> {
  const rows = await db.query<{ at: Date; date: string; before: string; after: string }>(
    `select t as at, (t at time zone $1)::date::text as date,
            to_char((t - interval '1 second') at time zone $1 + interval '1 second', 'HH24:MI') as before,
            to_char(t at time zone $1, 'HH24:MI') as after
       from generate_series(timestamptz '2026-01-01 00:00Z', timestamptz '2027-12-31 23:45Z', interval '15 minutes') as t
      where (t at time zone $1) - ((t - interval '15 minutes') at time zone $1) <> interval '15 minutes'
      order by t`,
    [zone],
  );
  return rows.map((row) => ({ at: new Date(row.at).getTime(), date: row.date, before: row.before, after: row.after }));
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3));
const hhmm = (minutes: number) => `${String(Math.floor(minutes / 60) % 24).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;
const dayBefore = (date: string) => new Date(Date.parse(`${date}T00:00:00Z`) - 24 * HOUR).toISOString().slice(0, 10);

/** The instant a wall-clock time of `date` names in `zone`, as Postgres reads it. */
async function instantOf(zone: string, date: string, time: string): Promise<number> {
  const [{ at }] = await db.query<{ at: Date }>("select ($2::date + $3::time) at time zone $1 as at", [zone, date, time]);
  return new Date(at).getTime();
}

describe("what plays now on daylight-saving days: 2026 and 2027 in five zones", () => {
  for (const [zone, expected] of Object.entries(TRANSITIONS)) {
    it(`${zone}: the database changes the clocks exactly on the matrix's dates`, async () => {
      const found = await transitionsOf(zone);
      expect(found.map((t) => ({ date: t.date, kind: minutesOf(t.after) > minutesOf(t.before) ? "forward" : "back" }))).toEqual(expected);
    });

    for (const { date, kind } of expected) {
      const transition = async () => (await transitionsOf(zone)).find((t) => t.date === date)!;

      if (kind === "forward") {
        it(`${zone} ${date}, clocks forward: a block starting in the skipped hour plays from the jump`, async () => {
          const { at, before, after } = await transition();
          const { key, blocks: [block] } = await keyWith(zone, [{ start: hhmm(minutesOf(before) + 30), end: hhmm(minutesOf(after) + 60) }]);
          expect((await playing(key, at - MINUTE)).block_id).toBeNull();
          expect(await playing(key, at)).toMatchObject({ block_id: block, started_on: date, local_time: `${date} ${after}` });
          expect((await playing(key, at + 59 * MINUTE)).block_id).toBe(block);
          expect((await playing(key, at + 60 * MINUTE)).block_id).toBeNull();
        });

        it(`${zone} ${date}, clocks forward: a block inside the skipped hour does not play that day, and does the next`, async () => {
          const { at, before } = await transition();
          const { key, blocks: [block] } = await keyWith(zone, [{ start: hhmm(minutesOf(before) + 15), end: hhmm(minutesOf(before) + 45) }]);
          for (const probe of [at - MINUTE, at, at + 30 * MINUTE]) expect((await playing(key, probe)).block_id).toBeNull();
          const nextDay = new Date(Date.parse(`${date}T00:00:00Z`) + 24 * HOUR).toISOString().slice(0, 10);
          expect((await playing(key, await instantOf(zone, nextDay, hhmm(minutesOf(before) + 20)))).block_id).toBe(block);
        });

        it(`${zone} ${date}, clocks forward: the overnight block 22:00-06:00 of that night plays an hour less`, async () => {
          const { key, blocks: [block] } = await keyWith(zone, [{ start: "22:00", end: "06:00" }]);
          const start = await instantOf(zone, dayBefore(date), "22:00");
          const end = await instantOf(zone, date, "06:00");
          expect(end - start).toBe(7 * HOUR);
          expect(await playing(key, start)).toMatchObject({ block_id: block, started_on: dayBefore(date) });
          expect(await playing(key, end - MINUTE)).toMatchObject({ block_id: block, started_on: dayBefore(date) });
          expect((await playing(key, end)).block_id).toBeNull();
        });
      } else {
        it(`${zone} ${date}, clocks back: a block spanning the repeated hour plays through both passes, an hour longer`, async () => {
          const { at, before, after } = await transition();
          const repeated = (minutesOf(before) - minutesOf(after)) * MINUTE;
          const { key, blocks: [block] } = await keyWith(zone, [{ start: hhmm(minutesOf(after) - 30), end: hhmm(minutesOf(before) + 30) }]);
          const start = at - repeated - 30 * MINUTE;
          expect((await playing(key, start - MINUTE)).block_id).toBeNull();
          for (const probe of [start, at - MINUTE, at, at + repeated + 29 * MINUTE]) {
            expect(await playing(key, probe)).toMatchObject({ block_id: block, started_on: date });
          }
          expect((await playing(key, at + repeated + 30 * MINUTE)).block_id).toBeNull();
          expect(at + repeated + 30 * MINUTE - start).toBe(2 * repeated + 60 * MINUTE);
        });

        it(`${zone} ${date}, clocks back: a block inside the repeated hour plays twice`, async () => {
          const { at, before, after } = await transition();
          const repeated = (minutesOf(before) - minutesOf(after)) * MINUTE;
          const { key, blocks: [block] } = await keyWith(zone, [{ start: hhmm(minutesOf(after) + 15), end: hhmm(minutesOf(after) + 45) }]);
          const firstPass = at - repeated;
          expect((await playing(key, firstPass + 20 * MINUTE)).block_id).toBe(block);
          expect((await playing(key, firstPass + 50 * MINUTE)).block_id).toBeNull();
          expect((await playing(key, at + 20 * MINUTE)).block_id).toBe(block);
          expect((await playing(key, at + 50 * MINUTE)).block_id).toBeNull();
        });

        it(`${zone} ${date}, clocks back: the overnight block 22:00-06:00 of that night plays an hour more`, async () => {
          const { key, blocks: [block] } = await keyWith(zone, [{ start: "22:00", end: "06:00" }]);
          const start = await instantOf(zone, dayBefore(date), "22:00");
          const end = await instantOf(zone, date, "06:00");
          expect(end - start).toBe(9 * HOUR);
          expect(await playing(key, end - MINUTE)).toMatchObject({ block_id: block, started_on: dayBefore(date) });
          expect((await playing(key, end)).block_id).toBeNull();
        });
      }
    }
  }

  for (const date of ["2026-03-08", "2026-11-01", "2027-03-28", "2027-10-31", "2026-04-05", "2026-09-27"]) {
    it(`Asia/Kolkata on ${date}, a night other zones change: 02:30 plays at 02:30 and 22:00-06:00 lasts 8 hours`, async () => {
      const zone = "Asia/Kolkata";
      const { key, blocks: [early, overnight] } = await keyWith(zone, [{ start: "02:30", end: "03:00" }, { start: "22:00", end: "06:00" }]);
      const start = await instantOf(zone, dayBefore(date), "22:00");
      const end = await instantOf(zone, date, "06:00");
      expect(end - start).toBe(8 * HOUR);
      expect((await playing(key, await instantOf(zone, date, "02:29"))).block_id).toBe(overnight);
      expect((await playing(key, await instantOf(zone, date, "02:30"))).block_id).toBe(early);
      expect((await playing(key, end - MINUTE)).block_id).toBe(overnight);
      expect((await playing(key, end)).block_id).toBeNull();
    });
  }
});
