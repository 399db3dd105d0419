import postgres from "postgres";
import { describe, expect, it } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { WEEKDAYS } from "../../functions/app/schedule/schemas.ts";
import { readLegacyIfChanged, readSchedulePayload } from "../support/schedule-reads.ts";
import { scopedDatabase, type TestDatabase } from "../support/database.ts";
import { ABUNDANCE, CLARITY, DEMO_DAILY, DEMO_WEEKLY, NO_SCHEDULE, PEACE } from "../support/demo-schedules.ts";

/** The legacy read as a first poll makes it (no version held): the outcome and the whole payload. */
async function readLegacySchedule(db: Database, key: string, email: string) {
  const { outcome, body } = await readLegacyIfChanged(db, key, email, null);
  return { outcome, body };
}

/** The demo data as seeded, never changed. */
const demo = scopedDatabase();
/** A copy for the tests that edit schedules. */
const edits = scopedDatabase();

/** What a poll reads (the stored copy), checked against a fresh assembly by cadence.schedule_payload. */
async function payload(db: Database, key: string) {
  const stored = await readSchedulePayload(db, key);
  const [{ assembled }] = await db.query<{ assembled: string | null }>(
    "select cadence.schedule_payload($1)::text as assembled",
    [key],
  );
  expect(stored).toBe(assembled);
  return stored === null ? null : JSON.parse(stored);
}

/** Two sessions of their own, so one can hold a transaction open while the other waits on it. */
async function sessions(database: TestDatabase) {
  const sql = postgres(database.url, { max: 2, onnotice: () => {} });
  const [first, second] = await Promise.all([sql.reserve(), sql.reserve()]);
  return {
    first,
    second,
    async close() {
      first.release();
      second.release();
      await sql.end();
    },
  };
}

/** Resolves once the session with `pid` waits for a lock, or its statement has already finished. */
async function waitingForLock(db: Database, pid: number, statement: Promise<string>) {
  let finished = false;
  void statement.then(() => (finished = true));
  while (!finished) {
    const [row] = await db.query<{ waiting: boolean }>(
      "select wait_event_type = 'Lock' as waiting from pg_catalog.pg_stat_activity where pid = $1",
      [pid],
    );
    if (row?.waiting) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Settles to "done", or to the message of the error the statement failed with. */
function outcomeOf(statement: Promise<unknown>): Promise<string> {
  return statement.then(() => "done", (error: Error) => error.message);
}

const DEMO_ACCOUNT = "a0000000-0000-4000-8000-000000000001";
const OTHER_ACCOUNT = "a0000000-0000-4000-8000-000000000002";
const LEGACY_ACCOUNT = "a0000000-0000-4000-8000-000000000003";
const DAILY_SCHEDULE = "c0000000-0000-4000-8000-000000000001";
const WEEKLY_SCHEDULE = "c0000000-0000-4000-8000-000000000002";
const MORNING_BLOCK = "d0000000-0000-4000-8000-000000000001";

describe("the schedule payload of a license key (stored for polls, equal to cadence.schedule_payload)", () => {
  it("reads the account's daily schedule for DEMO-0000-0000-0001, blocks in start order", async () => {
    expect(await payload(demo.db, "DEMO-0000-0000-0001")).toEqual(DEMO_DAILY);
  });

  it("reads the key's own weekly schedule for DEMO-0000-0000-0002: it wins over the account's daily one", async () => {
    const weekly = await payload(demo.db, "DEMO-0000-0000-0002");
    expect(weekly).toEqual(DEMO_WEEKLY);
    expect(Object.keys(weekly.weekly)).toEqual([...WEEKDAYS]);
  });

  it("reads the account's schedule for an inactive key of the account (DEMO-0000-0000-0003)", async () => {
    expect(await payload(demo.db, "DEMO-0000-0000-0003")).toEqual(DEMO_DAILY);
  });

  it("reads type null with empty lists when neither the key nor its account has a schedule", async () => {
    expect(await payload(demo.db, "DEMO-0000-0000-0004")).toEqual(NO_SCHEDULE);
    expect(await payload(demo.db, "DEMO-0000-0000-0005")).toEqual(NO_SCHEDULE);
  });

  it("is null for an unknown key", async () => {
    expect(await payload(demo.db, "ZZZZ-0000-0000-0001")).toBeNull();
    expect(await payload(demo.db, "demo-0000-0000-0001")).toBeNull();
  });

  it("reads the schedule of the account whose e-mail equals the stored e-mail of a key with no owner link", async () => {
    const schedule = await newSchedule({ account: LEGACY_ACCOUNT, type: "daily" });
    await addBlock(schedule, { start: "07:15", end: "07:45" });
    const legacy = await payload(edits.db, "DEMO-0000-0000-0005");
    expect(legacy.type).toBe("daily");
    expect(legacy.daily.map((block: { startTime: string }) => block.startTime)).toEqual(["07:15"]);
    await edits.db.query("delete from public.schedules where id = $1", [schedule]);
  });

  it("ignores the stored e-mail when the key has an owner link", async () => {
    const schedule = await newSchedule({ account: LEGACY_ACCOUNT, type: "daily" });
    await edits.db.query("update public.license_keys set email = 'legacy@example.com' where key = 'DEMO-0000-0000-0004'");
    expect(await payload(edits.db, "DEMO-0000-0000-0004")).toEqual(NO_SCHEDULE);
    await edits.db.query("update public.license_keys set email = 'other@example.com' where key = 'DEMO-0000-0000-0004'");
    await edits.db.query("delete from public.schedules where id = $1", [schedule]);
  });

  it("plays a block's proclamations in position order, the same one twice if staff put it twice", async () => {
    const schedule = await newSchedule({ key: "DEMO-0000-0000-0004", type: "daily" });
    const block = await addBlock(schedule, { start: "10:00", end: "11:00" });
    await edits.db.query(
      `insert into public.schedule_block_proclamations (block_id, position, proclamation_id)
       values ($1, 30, $2), ($1, 10, $3), ($1, 20, $2)`,
      [block, PEACE, CLARITY],
    );
    const [served] = (await payload(edits.db, "DEMO-0000-0000-0004")).daily;
    expect(served.proclamationIds).toEqual([CLARITY, PEACE, PEACE]);
    await edits.db.query("delete from public.schedules where id = $1", [schedule]);
  });

  it("orders blocks by start, then end, then id", async () => {
    const schedule = await newSchedule({ key: "DEMO-0000-0000-0004", type: "weekly" });
    const late = await addBlock(schedule, { start: "18:00", end: "19:00", weekday: "friday" });
    const longer = await addBlock(schedule, { start: "09:00", end: "12:00", weekday: "friday" });
    const shorter = await addBlock(schedule, { start: "09:00", end: "10:00", weekday: "friday" });
    const friday = (await payload(edits.db, "DEMO-0000-0000-0004")).weekly.friday;
    expect(friday.map((block: { id: string }) => block.id)).toEqual([shorter, longer, late]);
    await edits.db.query("delete from public.schedules where id = $1", [schedule]);
  });
});

describe("cadence.legacy_schedule", () => {
  it("answers paired with the key's payload when the key belongs to the e-mail's account", async () => {
    const row = await readLegacySchedule(demo.db, "DEMO-0000-0000-0002", "demo@example.com");
    expect(row.outcome).toBe("paired");
    expect(JSON.parse(row.body ?? "")).toEqual(DEMO_WEEKLY);
  });

  it("pairs an inactive key: only the pairing is checked", async () => {
    const row = await readLegacySchedule(demo.db, "DEMO-0000-0000-0003", "demo@example.com");
    expect(row.outcome).toBe("paired");
    expect(JSON.parse(row.body ?? "")).toEqual(DEMO_DAILY);
  });

  it("pairs a key with no owner link through its stored e-mail", async () => {
    const row = await readLegacySchedule(demo.db, "DEMO-0000-0000-0005", "legacy@example.com");
    expect(row.outcome).toBe("paired");
    expect(JSON.parse(row.body ?? "")).toEqual(NO_SCHEDULE);
  });

  it("returns no payload when the pairing fails", async () => {
    expect(await readLegacySchedule(demo.db, "DEMO-0000-0000-0004", "demo@example.com")).toEqual({ outcome: "not_owner", body: null });
    expect(await readLegacySchedule(demo.db, "ZZZZ-0000-0000-0001", "demo@example.com")).toEqual({ outcome: "key_not_found", body: null });
    expect(await readLegacySchedule(demo.db, "DEMO-0000-0000-0001", "nobody@example.com")).toEqual({ outcome: "user_not_found", body: null });
  });
});

describe("schedule edits in the dashboard", () => {
  it("accepts an end of 24:00 and an end equal to the start", async () => {
    await expect(addBlock(DAILY_SCHEDULE, { start: "23:00", end: "24:00" }).then(removeBlock)).resolves.toBeUndefined();
    await expect(addBlock(DAILY_SCHEDULE, { start: "05:00", end: "05:00" }).then(removeBlock)).resolves.toBeUndefined();
  });

  it("rejects a start of 24:00", async () => {
    await expect(addBlock(DAILY_SCHEDULE, { start: "24:00", end: "01:00" })).rejects.toThrow(
      /violates check constraint "block_start_is_before_midnight"/,
    );
  });

  it("rejects a time past 24:00", async () => {
    await expect(addBlock(DAILY_SCHEDULE, { start: "23:00", end: "24:30" })).rejects.toThrow(/out of range: "24:30"/);
    await expect(addBlock(DAILY_SCHEDULE, { start: "25:00", end: "01:00" })).rejects.toThrow(/out of range: "25:00"/);
  });

  it("rejects a time that is not a whole minute", async () => {
    await expect(addBlock(DAILY_SCHEDULE, { start: "06:00:30", end: "07:00" })).rejects.toThrow(
      /violates check constraint "block_times_are_whole_minutes"/,
    );
  });

  it("rejects a weekday on a block of a daily schedule, saying why", async () => {
    await expect(addBlock(DAILY_SCHEDULE, { start: "06:00", end: "07:00", weekday: "monday" })).rejects.toMatchObject({
      message: expect.stringMatching(/is in a daily schedule, so its weekday must be empty \(not monday\)/),
      constraint: "block_weekday_matches_schedule_type",
    });
    await expect(
      edits.db.query("update public.schedule_blocks set weekday = 'monday' where id = $1", [MORNING_BLOCK]),
    ).rejects.toThrow(/is in a daily schedule/);
  });

  it("rejects a block of a weekly schedule without a weekday, saying why", async () => {
    await expect(addBlock(WEEKLY_SCHEDULE, { start: "06:00", end: "07:00" })).rejects.toMatchObject({
      message: expect.stringMatching(/is in a weekly schedule, so it needs a weekday \(monday \.\. sunday\)/),
      constraint: "block_weekday_matches_schedule_type",
    });
  });

  it("rejects moving a block to a schedule of the other type", async () => {
    await expect(
      edits.db.query("update public.schedule_blocks set schedule_id = $1 where id = $2", [WEEKLY_SCHEDULE, MORNING_BLOCK]),
    ).rejects.toThrow(/is in a weekly schedule, so it needs a weekday/);
  });

  it("rejects a weekday that is not monday .. sunday", async () => {
    await expect(addBlock(WEEKLY_SCHEDULE, { start: "06:00", end: "07:00", weekday: "Mon" })).rejects.toThrow(
      /violates check constraint "block_weekday_is_monday_to_sunday"/,
    );
  });

  it("rejects a type change while blocks do not fit the new type, saying how many", async () => {
    await expect(
      edits.db.query("update public.schedules set type = 'weekly' where id = $1", [DAILY_SCHEDULE]),
    ).rejects.toMatchObject({
      message: expect.stringMatching(/cannot become weekly: 3 of its blocks have no weekday/),
      constraint: "block_weekday_matches_schedule_type",
    });
    await expect(
      edits.db.query("update public.schedules set type = 'daily' where id = $1", [WEEKLY_SCHEDULE]),
    ).rejects.toThrow(/cannot become daily: 3 of its blocks have a weekday/);
  });

  it("allows a type change once no block is left to contradict it", async () => {
    const schedule = await newSchedule({ key: "DEMO-0000-0000-0004", type: "daily" });
    await edits.db.query("update public.schedules set type = 'weekly' where id = $1", [schedule]);
    expect((await payload(edits.db, "DEMO-0000-0000-0004")).type).toBe("weekly");
    await edits.db.query("delete from public.schedules where id = $1", [schedule]);
  });

  it("rejects a second proclamation at the same position of a block", async () => {
    await expect(
      edits.db.query("insert into public.schedule_block_proclamations (block_id, position, proclamation_id) values ($1, 1, $2)", [
        MORNING_BLOCK,
        CLARITY,
      ]),
    ).rejects.toThrow(/violates unique constraint "block_position_is_unique"/);
  });

  it("rejects a proclamation that does not exist, and deleting one a block still plays", async () => {
    await expect(
      edits.db.query("insert into public.schedule_block_proclamations (block_id, position, proclamation_id) values ($1, 9, $2)", [
        MORNING_BLOCK,
        "b0000000-0000-4000-8000-0000000000ff",
      ]),
    ).rejects.toThrow(/violates foreign key constraint "block_proclamation_exists"/);
    await expect(edits.db.query("delete from public.proclamations where id = $1", [ABUNDANCE])).rejects.toThrow(
      /violates foreign key constraint "block_proclamation_exists"/,
    );
  });

  it("rejects a schedule with two owners or none, a second schedule per owner, and an unknown type", async () => {
    await expect(
      edits.db.query("insert into public.schedules (license_key, account_id, type) values ('DEMO-0000-0000-0004', $1, 'daily')", [
        OTHER_ACCOUNT,
      ]),
    ).rejects.toThrow(/violates check constraint "schedule_has_exactly_one_owner"/);
    await expect(edits.db.query("insert into public.schedules (type) values ('daily')")).rejects.toThrow(
      /schedule_has_exactly_one_owner/,
    );
    await expect(newSchedule({ account: DEMO_ACCOUNT, type: "weekly" })).rejects.toThrow(
      /violates unique constraint "one_schedule_per_account"/,
    );
    await expect(newSchedule({ key: "DEMO-0000-0000-0002", type: "daily" })).rejects.toThrow(
      /violates unique constraint "one_schedule_per_license_key"/,
    );
    await expect(newSchedule({ account: OTHER_ACCOUNT, type: "monthly" })).rejects.toThrow(
      /violates check constraint "schedule_type_is_daily_or_weekly"/,
    );
  });

  it("leaves the demo schedules as they were after all the rejected edits", async () => {
    expect(await payload(edits.db, "DEMO-0000-0000-0001")).toEqual(DEMO_DAILY);
    expect(await payload(edits.db, "DEMO-0000-0000-0002")).toEqual(DEMO_WEEKLY);
  });
});

describe("schedule edits racing each other", () => {
  it("rejects a type change that waited for a block added in the meantime", async () => {
    const schedule = await newSchedule({ key: "DEMO-0000-0000-0004", type: "daily" });
    const { first, second, close } = await sessions(edits);
    try {
      await first.unsafe("begin");
      await first.unsafe("insert into public.schedule_blocks (schedule_id, start_time, end_time) values ($1, '06:00', '07:00')", [schedule]);
      const [{ pid }] = await second.unsafe<{ pid: number }[]>("select pg_backend_pid() as pid");
      const outcome = outcomeOf(second.unsafe("update public.schedules set type = 'weekly' where id = $1", [schedule]));
      await waitingForLock(edits.db, pid, outcome);
      await first.unsafe("commit");
      expect(await outcome).toMatch(/cannot become weekly: 1 of its blocks have no weekday/);
    } finally {
      await close();
      await edits.db.query("delete from public.schedules where id = $1", [schedule]);
    }
  });

  it("rejects a block that waited for a type change made in the meantime", async () => {
    const schedule = await newSchedule({ key: "DEMO-0000-0000-0004", type: "daily" });
    const { first, second, close } = await sessions(edits);
    try {
      await first.unsafe("begin");
      await first.unsafe("update public.schedules set type = 'weekly' where id = $1", [schedule]);
      const [{ pid }] = await second.unsafe<{ pid: number }[]>("select pg_backend_pid() as pid");
      const outcome = outcomeOf(
        second.unsafe("insert into public.schedule_blocks (schedule_id, start_time, end_time) values ($1, '06:00', '07:00')", [schedule]),
      );
      await waitingForLock(edits.db, pid, outcome);
      await first.unsafe("commit");
      expect(await outcome).toMatch(/is in a weekly schedule, so it needs a weekday/);
    } finally {
      await close();
      await edits.db.query("delete from public.schedules where id = $1", [schedule]);
    }
  });
});

describe("stored payloads (schedule_payloads) stay equal to cadence.schedule_payload", () => {
  const stored = scopedDatabase();

  const rollback = new Error("rollback");
  const D = (n: number) => `d0000000-0000-4000-8000-00000000000${n}`;

  /** The payload every key is served, and the keys whose served payload is missing or differs from a fresh assembly. */
  async function state(sql: postgres.TransactionSql) {
    const rows = await sql.unsafe<{ key: string; stored: string | null; assembled: string }[]>(
      `select k.key, (select s.payload::text from cadence.served_schedules(array[k.key]) as s) as stored,
              cadence.schedule_payload(k.key)::text as assembled
       from public.license_keys as k order by k.key`,
    );
    return {
      payloads: Object.fromEntries(rows.map((row) => [row.key, row.stored])),
      stale: rows.filter((row) => row.stored !== row.assembled).map((row) => row.key),
    };
  }

  /** Applies `setup`, then `edit`, in a transaction that is rolled back; reports the state around `edit`. */
  async function afterEdit(edit: string, setup = "") {
    const sql = postgres(stored.url, { max: 1, onnotice: () => {} });
    let before: Awaited<ReturnType<typeof state>> | undefined;
    let after: Awaited<ReturnType<typeof state>> | undefined;
    try {
      await sql.begin(async (tx) => {
        if (setup) await tx.unsafe(setup);
        before = await state(tx);
        await tx.unsafe(edit);
        after = await state(tx);
        throw rollback;
      });
    } catch (error) {
      if (error !== rollback) throw error;
    } finally {
      await sql.end();
    }
    return { before: before!, after: after! };
  }

  const edits: Array<[name: string, edit: string, setup?: string]> = [
    ["a block's times", `update public.schedule_blocks set end_time = '09:30' where id = '${D(1)}'`],
    ["a block's dynamicAudio", `update public.schedule_blocks set dynamic_audio = false where id = '${D(2)}'`],
    ["a block's weekday", `update public.schedule_blocks set weekday = 'tuesday' where id = '${D(4)}'`],
    ["a block added", `insert into public.schedule_blocks (schedule_id, start_time, end_time) values ('${DAILY_SCHEDULE}', '15:00', '16:00')`],
    ["a block deleted", `delete from public.schedule_blocks where id = '${D(3)}'`],
    [
      "a block moved to another schedule",
      `update public.schedule_blocks set schedule_id = 'c0000000-0000-4000-8000-0000000000a4' where id = '${D(2)}'`,
      "insert into public.schedules (id, license_key, type) values ('c0000000-0000-4000-8000-0000000000a4', 'DEMO-0000-0000-0004', 'daily')",
    ],
    ["play order swapped", `update public.schedule_block_proclamations set position = 3 - position where block_id = '${D(1)}'`],
    ["a proclamation replaced", `update public.schedule_block_proclamations set proclamation_id = '${CLARITY}' where block_id = '${D(4)}'`],
    ["a proclamation moved to another block", `update public.schedule_block_proclamations set block_id = '${D(2)}' where block_id = '${D(1)}' and position = 2`],
    ["a proclamation added", `insert into public.schedule_block_proclamations (block_id, position, proclamation_id) values ('${D(5)}', 2, '${PEACE}')`],
    ["a proclamation removed", `delete from public.schedule_block_proclamations where block_id = '${D(3)}' and position = 1`],
    [
      "a schedule's type",
      `update public.schedules set type = 'daily' where id = '${WEEKLY_SCHEDULE}'`,
      `delete from public.schedule_blocks where schedule_id = '${WEEKLY_SCHEDULE}'`,
    ],
    ["a schedule moved from the account to a key", `update public.schedules set account_id = null, license_key = 'DEMO-0000-0000-0004' where id = '${DAILY_SCHEDULE}'`],
    ["a schedule deleted", `delete from public.schedules where id = '${DAILY_SCHEDULE}'`],
    ["a schedule created for a key", `insert into public.schedules (license_key, type) values ('DEMO-0000-0000-0004', 'weekly')`],
    ["a key's owner link", `update public.license_keys set account_id = '${OTHER_ACCOUNT}' where key = 'DEMO-0000-0000-0003'`],
    ["a key's owner link removed", `update public.license_keys set account_id = null, email = 'Legacy@example.com' where key = 'DEMO-0000-0000-0001'`],
    ["the stored e-mail of a key with no owner link", `update public.license_keys set email = 'DEMO@example.com' where key = 'DEMO-0000-0000-0005'`],
    ["a key renamed", `update public.license_keys set key = 'DEMO-0000-0000-0009' where key = 'DEMO-0000-0000-0002'`],
    ["a key issued", `insert into public.license_keys (key, account_id, email) values ('NEWK-0000-0000-0001', '${DEMO_ACCOUNT}', 'demo@example.com')`],
    ["a key issued with no owner link", `insert into public.license_keys (key, email) values ('NEWK-0000-0000-0002', 'demo@example.com')`],
    ["a key deleted", `delete from public.license_keys where key = 'DEMO-0000-0000-0004'`],
    [
      "an account's e-mail, for a key with no owner link",
      `update public.accounts set email = 'moved@example.com' where id = '${LEGACY_ACCOUNT}'`,
      `insert into public.schedules (account_id, type) values ('${LEGACY_ACCOUNT}', 'daily')`,
    ],
    [
      "an account deleted, for a key with no owner link",
      `delete from public.accounts where id = '${LEGACY_ACCOUNT}'`,
      `insert into public.schedules (account_id, type) values ('${LEGACY_ACCOUNT}', 'daily')`,
    ],
    ["the blocks' proclamations truncated", "truncate public.schedule_block_proclamations"],
    ["all schedules truncated", "truncate public.schedules cascade"],
  ];

  for (const [name, edit, setup] of edits) {
    it(`follows ${name}`, async () => {
      const { before, after } = await afterEdit(edit, setup);
      expect(before.stale).toEqual([]);
      expect(after.payloads).not.toEqual(before.payloads);
      expect(after.stale).toEqual([]);
    });
  }

  it("keeps both of two concurrent edits of one schedule: the second waits, then refreshes", async () => {
    const { first, second, close } = await sessions(stored);
    try {
      await first.unsafe("begin");
      await first.unsafe(`update public.schedule_blocks set end_time = '09:30' where id = '${D(1)}'`);
      const [{ pid }] = await second.unsafe<{ pid: number }[]>("select pg_backend_pid() as pid");
      const outcome = outcomeOf(second.unsafe(`update public.schedule_blocks set dynamic_audio = false where id = '${D(2)}'`));
      await waitingForLock(stored.db, pid, outcome);
      await first.unsafe("commit");
      expect(await outcome).toBe("done");
      const { daily } = await payload(stored.db, "DEMO-0000-0000-0001");
      expect([daily[0].endTime, daily[1].dynamicAudio]).toEqual(["09:30", false]);
    } finally {
      await close();
    }
  });

  it("serves a key issued during an edit of its account's schedule the edit, neither waiting for the other", async () => {
    const { first, second, close } = await sessions(stored);
    try {
      await first.unsafe("begin");
      await first.unsafe(`insert into public.license_keys (key, account_id, email) values ('RACE-0000-0000-0001', '${DEMO_ACCOUNT}', 'demo@example.com')`);
      await second.unsafe(`insert into public.schedule_blocks (schedule_id, start_time, end_time) values ('${DAILY_SCHEDULE}', '05:00', '05:30')`);
      await first.unsafe("commit");
      expect((await payload(stored.db, "RACE-0000-0000-0001")).daily[0].startTime).toBe("05:00");
    } finally {
      await close();
    }
  });

  it("reads the schedule as committed while an edit of it is open: a poll never waits for an edit", async () => {
    const { first, close } = await sessions(stored);
    try {
      const before = await readSchedulePayload(stored.db, "DEMO-0000-0000-0001");
      await first.unsafe("begin");
      await first.unsafe(`update public.schedule_blocks set end_time = '08:45' where id = '${D(1)}'`);
      expect(await readSchedulePayload(stored.db, "DEMO-0000-0000-0001")).toBe(before);
      await first.unsafe("commit");
      const { daily } = await payload(stored.db, "DEMO-0000-0000-0001");
      expect(daily.find((block: { id: string }) => block.id === D(1)).endTime).toBe("08:45");
    } finally {
      await close();
    }
  });

  it("stores one payload per schedule, however many keys read it", async () => {
    const [{ schedules, payloads }] = await stored.db.query<{ schedules: number; payloads: number }>(
      "select (select count(*)::int from public.schedules) as schedules, (select count(*)::int from public.schedule_payloads) as payloads",
    );
    expect(payloads).toBe(schedules);
  });

  it("rebuilds a stored payload deleted by hand when staff call cadence.refresh_schedule_payloads", async () => {
    await stored.db.query(`delete from public.schedule_payloads where schedule_id = '${WEEKLY_SCHEDULE}'`);
    expect(await readSchedulePayload(stored.db, "DEMO-0000-0000-0002")).toBeNull();
    await stored.db.query("select cadence.refresh_schedule_payloads(array(select id from public.schedules))");
    expect(await payload(stored.db, "DEMO-0000-0000-0002")).toEqual(DEMO_WEEKLY);
  });
});

async function newSchedule(owner: { key?: string; account?: string; type: string }): Promise<string> {
  const [row] = await edits.db.query<{ id: string }>(
    "insert into public.schedules (license_key, account_id, type) values ($1, $2, $3) returning id",
    [owner.key ?? null, owner.account ?? null, owner.type],
  );
  return row.id;
}

async function addBlock(schedule: string, block: { start: string; end: string; weekday?: string }): Promise<string> {
  const [row] = await edits.db.query<{ id: string }>(
    "insert into public.schedule_blocks (schedule_id, weekday, start_time, end_time) values ($1, $2, $3, $4) returning id",
    [schedule, block.weekday ?? null, block.start, block.end],
  );
  return row.id;
}

async function removeBlock(id: string): Promise<void> {
  await edits.db.query("delete from public.schedule_blocks where id = $1", [id]);
}
