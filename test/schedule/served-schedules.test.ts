import { describe, expect, it } from "vitest";
import { servedSchedules } from "../../functions/app/schedule/served-schedules.ts";
import { readLegacyIfChanged, readScheduleIfChanged } from "../support/schedule-reads.ts";
import { scopedDatabase } from "../support/database.ts";

const database = scopedDatabase();

/** One poll as the license schedule route makes it: whether Postgres sent the payload, and what is served. */
async function poll(served: ReturnType<typeof servedSchedules>, key: string) {
  const { row, payload } = await served.read(key, (version) => readScheduleIfChanged(database.db, key, version));
  return payload && { carried: row?.body !== null, payload };
}

describe("GET /api/v2/licenses/{licenseKey}/schedule: the last served payload per key", () => {
  it("gets the payload from Postgres only when it changed, and serves a change at once", async () => {
    const served = servedSchedules();
    const first = await poll(served, "DEMO-0000-0000-0001");
    const again = await poll(served, "DEMO-0000-0000-0001");
    expect(first?.carried).toBe(true);
    expect(again?.carried).toBe(false);
    expect(again?.payload).toBe(first?.payload);

    await database.db.query("update public.schedule_blocks set dynamic_audio = not dynamic_audio where id = 'd0000000-0000-4000-8000-000000000001'");
    const edited = await poll(served, "DEMO-0000-0000-0001");
    expect(edited?.carried).toBe(true);
    expect(edited?.payload.version).not.toBe(first?.payload.version);
    const dynamicAudio = (poll: typeof first) => JSON.parse(poll!.payload.body).daily[0].dynamicAudio;
    expect(dynamicAudio(edited)).toBe(!dynamicAudio(first));
  });

  it("builds a payload once for all the keys that share it", async () => {
    const served = servedSchedules();
    const daily = await poll(served, "DEMO-0000-0000-0001");
    const weekly = await poll(served, "DEMO-0000-0000-0002");
    const none = await poll(served, "DEMO-0000-0000-0004");
    const alsoNone = await poll(served, "DEMO-0000-0000-0005");
    expect(none?.payload).toBe(alsoNone?.payload);
    expect(daily?.payload).not.toBe(weekly?.payload);
    expect(none?.payload).not.toBe(daily?.payload);
  });

  it("finds no row for an unknown key", async () => {
    expect(await readScheduleIfChanged(database.db, "ZZZZ-0000-0000-0000", null)).toBeNull();
    expect(await poll(servedSchedules(), "ZZZZ-0000-0000-0000")).toBeNull();
  });

  it("asks again without a version when the payload for the answer's version is no longer held", async () => {
    const text = (await readScheduleIfChanged(database.db, "DEMO-0000-0000-0004", null))!.body!;
    const asked: Array<string | null> = [];
    // The first answer says "unchanged" for a version whose payload this process does not hold.
    const answers = [{ version: "dropped", body: null }, { version: "dropped", body: text }];
    const { payload } = await servedSchedules().read("DEMO-0000-0000-0004", (version) => {
      asked.push(version);
      return Promise.resolve(answers[asked.length - 1]);
    });
    expect(asked).toEqual([null, null]);
    expect(JSON.parse(payload!.body).type).toBeNull();
  });
});

describe("GET /api/v2/schedule: the legacy read with the version held", () => {
  it("pairs first, then sends the payload only when the version held is not the current one", async () => {
    const first = await readLegacyIfChanged(database.db, "DEMO-0000-0000-0002", "demo@example.com", null);
    expect(first.outcome).toBe("paired");
    expect(first.body).not.toBeNull();
    const again = await readLegacyIfChanged(database.db, "DEMO-0000-0000-0002", "demo@example.com", first.version);
    expect(again).toEqual({ outcome: "paired", version: first.version, body: null });
    expect(await readLegacyIfChanged(database.db, "DEMO-0000-0000-0004", "demo@example.com", first.version)).toEqual({
      outcome: "not_owner",
      version: null,
      body: null,
    });
  });
});
