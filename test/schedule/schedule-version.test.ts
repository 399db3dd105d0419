import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import type { ScheduleContent } from "../../functions/app/schedule/schemas.ts";
import { readScheduleIfChanged } from "../support/schedule-reads.ts";
import { versionPayload } from "../../functions/app/schedule/versioned-payload.ts";
import { testApp } from "../support/app.ts";
import { describeDirectOnly, scopedDatabase } from "../support/database.ts";
import { CLARITY, DEMO_DAILY, DEMO_WEEKLY, NO_SCHEDULE, PEACE } from "../support/demo-schedules.ts";
import { expectedVersion } from "../support/expected-version.ts";
import { startServer } from "../support/server.ts";

const DEMO_KEYS = ["DEMO-0000-0000-0001", "DEMO-0000-0000-0002", "DEMO-0000-0000-0003", "DEMO-0000-0000-0004", "DEMO-0000-0000-0005"];

/** The same object with the keys of every object in reverse order. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).reverse().map(([key, item]) => [key, reversed(item)]));
  }
  return value;
}

const clone = (content: ScheduleContent): ScheduleContent => structuredClone(content);

/** The version's one owner: cadence.schedule_version, which public.schedule_payloads stores. */
describe("cadence.schedule_version", () => {
  const database = scopedDatabase();

  async function scheduleVersion(content: unknown): Promise<string> {
    const [{ version }] = await database.db.query<{ version: string }>("select cadence.schedule_version($1::json) as version", [
      JSON.stringify(content),
    ]);
    return version;
  }

  it("is the SHA-256 hex digest of the canonical JSON of type, daily and weekly", async () => {
    const sha256 = createHash("sha256").update('{"daily":[],"type":null,"weekly":{}}').digest("hex");
    expect(await scheduleVersion(NO_SCHEDULE)).toBe(sha256);
  });

  it("is what the API computed before the database owned it, so no ETag moved", async () => {
    for (const content of [NO_SCHEDULE, DEMO_DAILY, DEMO_WEEKLY]) expect(await scheduleVersion(content)).toBe(expectedVersion(content));
  });

  it("is the same for the same content in another key order", async () => {
    expect(await scheduleVersion(reversed(DEMO_DAILY))).toBe(await scheduleVersion(DEMO_DAILY));
  });

  it("ignores blocks, which only repeat daily", async () => {
    expect(await scheduleVersion({ ...DEMO_DAILY, blocks: [] })).toBe(await scheduleVersion(DEMO_DAILY));
  });

  it("changes when any field a kiosk sees changes", async () => {
    const edits: Array<[string, (content: ScheduleContent) => void]> = [
      ["type", (c) => (c.type = "weekly")],
      ["block id", (c) => (c.daily[0].id = "d0000000-0000-4000-8000-0000000000ff")],
      ["startTime", (c) => (c.daily[0].startTime = "06:01")],
      ["startMinutes", (c) => (c.daily[0].startMinutes = 361)],
      ["endTime", (c) => (c.daily[0].endTime = "09:01")],
      ["endMinutes", (c) => (c.daily[0].endMinutes = 541)],
      ["overnight", (c) => (c.daily[0].overnight = true)],
      ["durationMinutes", (c) => (c.daily[0].durationMinutes = 181)],
      ["dynamicAudio", (c) => (c.daily[0].dynamicAudio = true)],
      ["play order", (c) => c.daily[0].proclamationIds.reverse()],
      ["a proclamation", (c) => (c.daily[0].proclamationIds[1] = CLARITY)],
      ["a repeated proclamation", (c) => c.daily[0].proclamationIds.push(PEACE)],
      ["block order", (c) => c.daily.reverse()],
      ["a block removed", (c) => c.daily.pop()],
      ["a block on another day", (c) => (c.weekly = { monday: [], tuesday: c.daily })],
    ];
    const versions = new Map<string, string>([["unchanged", await scheduleVersion(DEMO_DAILY)]]);
    for (const [field, edit] of edits) {
      const content = clone(DEMO_DAILY);
      edit(content);
      versions.set(field, await scheduleVersion(content));
    }
    expect(new Set(versions.values()).size).toBe(edits.length + 1);
  });
});

describeDirectOnly("versionPayload", () => {
  it("serves the database's version first, then the payload, compact", () => {
    const version = expectedVersion(DEMO_WEEKLY);
    const { body } = versionPayload(version, JSON.stringify(DEMO_WEEKLY, null, 1));
    expect(body.startsWith(`{"version":"${version}",`)).toBe(true);
    expect(body).toBe(JSON.stringify({ version, ...DEMO_WEEKLY }));
  });
});

describe("the version of a stored schedule", () => {
  const database = scopedDatabase();
  let db: Database;

  beforeAll(async () => {
    db = database.db;
  });

  async function version(key: string) {
    return (await readScheduleIfChanged(db, key, null))?.version;
  }

  it("changes with every dashboard edit a kiosk would see, and returns when the edit is undone", async () => {
    const block = "d0000000-0000-4000-8000-000000000002";
    const edits = [
      "update public.schedule_blocks set dynamic_audio = false where id = '" + block + "'",
      "update public.schedule_blocks set end_time = '12:45' where id = '" + block + "'",
      "update public.schedule_blocks set start_time = '11:45' where id = '" + block + "'",
      "update public.schedule_block_proclamations set position = 3 - position where block_id = 'd0000000-0000-4000-8000-000000000001'",
      "update public.schedule_block_proclamations set proclamation_id = '" + PEACE + "' where block_id = '" + block + "'",
      "insert into public.schedule_block_proclamations (block_id, position, proclamation_id) values ('" + block + "', 2, '" + PEACE + "')",
      "insert into public.schedule_blocks (schedule_id, start_time, end_time) values ('c0000000-0000-4000-8000-000000000001', '15:00', '16:00')",
      "delete from public.schedule_blocks where id = 'd0000000-0000-4000-8000-000000000003'",
    ];
    const original = await version("DEMO-0000-0000-0001");
    const seen = new Set([original]);
    for (const edit of edits) {
      await db.query(edit);
      seen.add(await version("DEMO-0000-0000-0001"));
    }
    expect(seen.size).toBe(edits.length + 1);

    const weekly = await version("DEMO-0000-0000-0002");
    await db.query("update public.schedule_blocks set weekday = 'tuesday' where weekday = 'monday'");
    const moved = await version("DEMO-0000-0000-0002");
    await db.query("update public.schedule_blocks set weekday = 'monday' where weekday = 'tuesday'");
    expect(moved).not.toBe(weekly);
    expect(await version("DEMO-0000-0000-0002")).toBe(weekly);
  });

  it("changes when a key gets a schedule of its own, and when its type changes", async () => {
    const none = await version("DEMO-0000-0000-0004");
    const [{ id }] = await db.query<{ id: string }>(
      "insert into public.schedules (license_key, type) values ('DEMO-0000-0000-0004', 'daily') returning id",
    );
    const emptyDaily = await version("DEMO-0000-0000-0004");
    await db.query("update public.schedules set type = 'weekly' where id = $1", [id]);
    const emptyWeekly = await version("DEMO-0000-0000-0004");
    await db.query("delete from public.schedules where id = $1", [id]);
    expect(new Set([none, emptyDaily, emptyWeekly]).size).toBe(3);
    expect(await version("DEMO-0000-0000-0004")).toBe(none);
  });
});

describe("version stability", () => {
  const first = scopedDatabase();
  const second = scopedDatabase();

  it("is the same in two databases seeded alike", async () => {
    for (const key of DEMO_KEYS) {
      const [a, b] = await Promise.all(
        [first, second].map(async ({ db }) => (await readScheduleIfChanged(db, key, null))?.version),
      );
      expect(a).toBe(b);
    }
  });

  it("is the same in another process: the real server under Deno sends this process's versions as ETags", async () => {
    const server = await startServer({ DATABASE_URL: second.url });
    try {
      const { request } = testApp(first.db);
      for (const key of DEMO_KEYS) {
        const path = `/api/v2/licenses/${key}/schedule`;
        const [here, there] = await Promise.all([request(path), fetch(`${server.url}${path}`)]);
        const { version } = await here.json();
        expect(there.headers.get("etag")).toBe(`"${version}"`);
        expect((await there.json()).version).toBe(version);
      }
    } finally {
      await server.stop();
    }
  });
});
