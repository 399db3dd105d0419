import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../functions/app/db/database.ts";
import { servedSchedules } from "../functions/app/schedule/served-schedules.ts";
import { freshDatabase, type TestDatabase } from "./support/database.ts";

let database: TestDatabase;

beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(() => database.drop());

/** The database, recording whether each answer carried a payload. */
function recording(db: Database) {
  const carried: boolean[] = [];
  const spy: Database = {
    ...db,
    async query<Row>(text: string, params?: readonly unknown[]) {
      const rows = await db.query<Row>(text, params);
      carried.push(rows.some((row) => (row as { body?: unknown }).body != null));
      return rows;
    },
  };
  return { spy, carried };
}

describe("GET /api/v2/licenses/{licenseKey}/schedule: the last served payload per key", () => {
  it("sends the payload from Postgres only when it changed, and serves the change at once", async () => {
    const { spy, carried } = recording(database.db);
    const read = servedSchedules(spy);
    const first = await read("DEMO-0000-0000-0001");
    const again = await read("DEMO-0000-0000-0001");
    expect(again).toBe(first);
    expect(carried).toEqual([true, false]);

    await database.db.query("update public.schedule_blocks set dynamic_audio = not dynamic_audio where id = 'd0000000-0000-4000-8000-000000000001'");
    const edited = await read("DEMO-0000-0000-0001");
    expect(carried).toEqual([true, false, true]);
    expect(edited?.version).not.toBe(first?.version);
    expect(edited?.content.daily[0].dynamicAudio).toBe(!first?.content.daily[0].dynamicAudio);
  });

  it("answers null for an unknown key", async () => {
    expect(await servedSchedules(database.db)("ZZZZ-0000-0000-0000")).toBeNull();
  });
});
