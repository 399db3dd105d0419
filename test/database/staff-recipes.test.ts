import { readdirSync, readFileSync } from "node:fs";
import postgres from "postgres";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Proclamation } from "../../functions/app/catalogue/schemas.ts";
import { SchedulePayload } from "../../functions/app/schedule/schemas.ts";
import { testApp } from "../support/app.ts";
import { freshDatabase, type TestDatabase } from "../support/database.ts";

// Each recipe runs as written, on the demo data: demo@example.com owns DEMO-0000-0000-0001 (which
// reads the account's daily schedule) to -0003 (inactive), other@example.com owns -0004 (no schedule,
// entitled to Grounding only).
const recipes = new URL("../../sql/recipes/", import.meta.url);
const RECIPE = {
  addProclamation: "add-proclamation-to-account.sql",
  accountDaily: "give-account-daily-schedule.sql",
  keyWeekly: "give-key-weekly-schedule.sql",
  moveKey: "move-key-to-account.sql",
  importKeys: "import-license-keys.sql",
  deactivateKey: "deactivate-key.sql",
  reinstateKey: "reinstate-key.sql",
  changeAccountEmail: "change-account-email.sql",
  moveKioskToNewKey: "move-kiosk-to-new-key.sql",
  notSeenForADay: "kiosks-not-seen-for-a-day.sql",
  playingNow: "what-kiosks-play-now.sql",
  addEventEndpoint: "add-event-endpoint.sql",
  rotateEventSecret: "rotate-event-endpoint-secret.sql",
  replayEvent: "replay-event.sql",
  deliveriesFailing: "event-deliveries-failing.sql",
} as const;
const DEMO = { email: "demo@example.com", key: "DEMO-0000-0000-0001", otherKeyOnDaily: "DEMO-0000-0000-0003" };
const OTHER = { email: "other@example.com", key: "DEMO-0000-0000-0004" };
const json = { "content-type": "application/json" };

let database: TestDatabase;
beforeEach(async () => {
  database = await freshDatabase();
});
afterEach(() => database.drop());

/**
 * Runs a recipe file as is, as the dashboard's SQL editor does: its whole text in one query, as
 * `postgres`; `edit` changes its text first, as staff replace a value.
 */
async function runRecipe(file: string, edit: (text: string) => string = (text) => text): Promise<Record<string, unknown>[]> {
  const sql = postgres(database.url, { max: 1, onnotice: () => {} });
  try {
    return [...(await sql.unsafe(edit(readFileSync(new URL(file, recipes), "utf8"))))];
  } finally {
    await sql.end();
  }
}

/** The kiosk-facing reads, through the app as a kiosk calls it: a new app each time, so no cache answers. */
const kiosk = {
  async schedule(key: string) {
    const response = await testApp(database.db).request(`/api/v2/licenses/${key}/schedule`);
    expect(response.status).toBe(200);
    return SchedulePayload.parse(await response.json());
  },
  async proclamations(key: string, email: string) {
    const response = await testApp(database.db).request("/api/v2/proclamations", { headers: { "x-license-key": key, "x-email": email } });
    expect(response.status).toBe(200);
    return Proclamation.array().parse(await response.json());
  },
  async validate(key: string, email: string) {
    const response = await testApp(database.db).request("/api/v2/license", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ license_key: key, email_address: email }),
    });
    return { status: response.status, body: await response.json() };
  },
};

/** The ids of proclamations by name, in the order given. */
async function proclamationIds(...names: string[]): Promise<string[]> {
  const rows = await database.db.query<{ id: string; name: string }>(
    "select id, name from public.proclamations where name = any ($1)",
    [names],
  );
  return names.map((name) => rows.find((row) => row.name === name)!.id);
}

describe("staff recipes (sql/recipes), each run as is against the migrated, seeded database", () => {
  it("add a proclamation and assign it to an account: the account's kiosks list it, other accounts' do not", async () => {
    const [assigned] = await runRecipe(RECIPE.addProclamation);
    const [account] = await database.db.query<{ id: string }>("select id from public.accounts where email = $1", [OTHER.email]);
    expect(assigned.account_id).toBe(account.id);

    const entitled = await kiosk.proclamations(OTHER.key, OTHER.email);
    expect(entitled.map((proclamation) => proclamation.name).sort()).toEqual(["Gratitude", "Grounding"]);
    expect(entitled.find((proclamation) => proclamation.id === assigned.proclamation_id)).toMatchObject({
      name: "Gratitude",
      content: "<p>I am grateful for this day.</p>",
    });
    expect((await kiosk.proclamations(DEMO.key, DEMO.email)).map((proclamation) => proclamation.id)).not.toContain(assigned.proclamation_id);
  });

  it("give an account a daily schedule: the account's keys read it", async () => {
    expect((await kiosk.schedule(OTHER.key)).type).toBeNull();
    await runRecipe(RECIPE.accountDaily);

    const schedule = await kiosk.schedule(OTHER.key);
    const [grounding] = await proclamationIds("Grounding");
    expect(schedule.type).toBe("daily");
    const blocks = schedule.daily.map(({ startTime, endTime, overnight, dynamicAudio, proclamationIds }) => (
      { startTime, endTime, overnight, dynamicAudio, proclamationIds }
    ));
    expect(blocks).toEqual([
      { startTime: "07:00", endTime: "08:00", overnight: false, dynamicAudio: false, proclamationIds: [grounding] },
      { startTime: "21:30", endTime: "06:00", overnight: true, dynamicAudio: true, proclamationIds: [grounding, grounding] },
    ]);
  });

  it("give an account a daily schedule when it has one: the recipe replaces it, blocks and all", async () => {
    expect((await kiosk.schedule(DEMO.key)).daily.map((block) => block.startTime)).toEqual(["06:00", "12:00", "22:00"]);
    await runRecipe(RECIPE.accountDaily, (text) => text.replace(`'${OTHER.email}'`, `'${DEMO.email}'`));

    expect((await kiosk.schedule(DEMO.key)).daily.map((block) => block.startTime)).toEqual(["07:00", "21:30"]);
  });

  it("give an account a daily schedule, with an e-mail no account has: refused by that e-mail, nothing changes", async () => {
    const run = runRecipe(RECIPE.accountDaily, (text) => text.replace(`'${OTHER.email}'`, "'nobody@example.com'"));
    await expect(run).rejects.toThrow("no account has the e-mail nobody@example.com");
    expect((await kiosk.schedule(OTHER.key)).type).toBeNull();
  });

  it("give an account a daily schedule, with a proclamation name that matches none: refused by that name, nothing changes", async () => {
    const run = runRecipe(RECIPE.accountDaily, (text) => text.replace("array['Grounding']", "array['Grounding', 'Groundnig']"));
    await expect(run).rejects.toThrow("no proclamation is named Groundnig");
    expect((await kiosk.schedule(OTHER.key)).type).toBeNull();
  });

  it("give a key a weekly schedule: the key reads it instead of its account's, the account's other keys do not", async () => {
    expect((await kiosk.schedule(DEMO.key)).type).toBe("daily");
    await runRecipe(RECIPE.keyWeekly);

    const schedule = await kiosk.schedule(DEMO.key);
    const [abundance, clarity, peace] = await proclamationIds("Abundance", "Clarity", "Peace");
    expect(schedule.type).toBe("weekly");
    const blocks = Object.fromEntries(
      Object.entries(schedule.weekly).map(([day, dayBlocks]) => [
        day,
        dayBlocks.map(({ startTime, endTime, durationMinutes, dynamicAudio, proclamationIds }) => (
          { startTime, endTime, durationMinutes, dynamicAudio, proclamationIds }
        )),
      ]),
    );
    expect(blocks).toEqual({
      monday: [{ startTime: "09:00", endTime: "09:30", durationMinutes: 30, dynamicAudio: false, proclamationIds: [abundance, clarity] }],
      tuesday: [],
      wednesday: [],
      thursday: [],
      friday: [{ startTime: "17:00", endTime: "18:00", durationMinutes: 60, dynamicAudio: true, proclamationIds: [peace] }],
      saturday: [{ startTime: "00:00", endTime: "24:00", durationMinutes: 1440, dynamicAudio: false, proclamationIds: [clarity] }],
      sunday: [],
    });
    expect((await kiosk.schedule(DEMO.otherKeyOnDaily)).type).toBe("daily");
  });

  it("move a key to another account: it validates with that account's e-mail, not the old one, and reads that account's schedule", async () => {
    expect((await kiosk.validate(DEMO.key, DEMO.email)).status).toBe(200);
    const moved = await runRecipe(RECIPE.moveKey);
    expect(moved).toEqual([{ outcome: "done", changed: true, account_email: OTHER.email }]);

    expect(await kiosk.validate(DEMO.key, OTHER.email)).toMatchObject({ status: 200, body: { key: DEMO.key, email_address: OTHER.email } });
    expect(await kiosk.validate(DEMO.key, DEMO.email)).toEqual({ status: 400, body: { message: "key does not belong to specified user" } });
    expect((await kiosk.schedule(DEMO.key)).type).toBeNull();
    expect((await kiosk.proclamations(DEMO.key, OTHER.email)).map((proclamation) => proclamation.name)).toEqual(["Grounding"]);
  });

  it("import license keys into an account: each validates with the account's e-mail and reads its schedule; a repeat skips them", async () => {
    expect(await runRecipe(RECIPE.importKeys)).toEqual([{ imported: "2", skipped: "0" }]);
    for (const key of ["IMPT-0000-0000-0001", "IMPT-0000-0000-0002"]) {
      expect(await kiosk.validate(key, DEMO.email)).toMatchObject({ status: 200, body: { key, email_address: DEMO.email } });
      expect(await kiosk.schedule(key)).toEqual(await kiosk.schedule(DEMO.key));
    }
    expect(await runRecipe(RECIPE.importKeys)).toEqual([{ imported: "0", skipped: "2" }]);
  });

  it("import license keys, one malformed: refused by license_key_format, none imported", async () => {
    const run = runRecipe(RECIPE.importKeys, (text) => text.replace("IMPT-0000-0000-0002", "IMPT-0000-0000-002"));
    await expect(run).rejects.toMatchObject({ constraint_name: "license_key_format" });
    expect(await database.db.query("select key from public.license_keys where key like 'IMPT-%'")).toEqual([]);
  });

  it("import 10,000 license keys in one statement: all of them, each reading the account's schedule", async () => {
    const keys = Array.from({ length: 10_000 }, (_, n) => `BULK-0000-${String(n).padStart(8, "0").replace(/^(\d{4})/, "$1-")}`);
    const imported = await runRecipe(RECIPE.importKeys, (text) => text.replace(/IMPT-0000-0000-0001\nIMPT-0000-0000-0002/, keys.join("\n")));
    expect(imported).toEqual([{ imported: "10000", skipped: "0" }]);
    expect(await kiosk.schedule(keys[9_999])).toEqual(await kiosk.schedule(DEMO.key));
  });

  it("deactivate a key: license validation refuses it", async () => {
    expect((await kiosk.validate(DEMO.key, DEMO.email)).status).toBe(200);
    expect(await runRecipe(RECIPE.deactivateKey)).toEqual([{ outcome: "done", changed: true }]);

    expect(await kiosk.validate(DEMO.key, DEMO.email)).toEqual({ status: 400, body: { message: "license key is not active" } });
    expect(await runRecipe(RECIPE.deactivateKey)).toEqual([{ outcome: "done", changed: false }]);
  });

  it("reinstate a key: it validates again", async () => {
    expect(await kiosk.validate("DEMO-0000-0000-0003", DEMO.email)).toEqual({ status: 400, body: { message: "license key is not active" } });
    expect(await runRecipe(RECIPE.reinstateKey)).toEqual([{ outcome: "done", changed: true }]);
    expect((await kiosk.validate("DEMO-0000-0000-0003", DEMO.email)).status).toBe(200);
    expect(await runRecipe(RECIPE.reinstateKey, (text) => text.replace("'DEMO-0000-0000-0003'", "'NONE-0000-0000-0000'"))).toEqual([
      { outcome: "unknown_license", changed: false },
    ]);
  });

  it("change an account's e-mail: its key (paired by the old e-mail alone) validates with the new one, not the old", async () => {
    const legacyKey = "DEMO-0000-0000-0005";
    expect((await kiosk.validate(legacyKey, "legacy@example.com")).status).toBe(200);
    expect(await runRecipe(RECIPE.changeAccountEmail)).toEqual([{ outcome: "done", changed: true }]);
    expect((await kiosk.validate(legacyKey, "legacy.new@example.com")).status).toBe(200);
    expect(await kiosk.validate(legacyKey, "legacy@example.com")).toEqual({ status: 400, body: { message: "user does not exist" } });
    expect(await runRecipe(RECIPE.changeAccountEmail, (text) => text.replace("'legacy.new@example.com'", "'demo@example.com'").replace("'legacy@example.com'", "'legacy.new@example.com'"))).toEqual([
      { outcome: "email_taken", changed: false },
    ]);
  });

  it("move a key to an account that does not exist: unknown_account, nothing moved or created", async () => {
    const run = await runRecipe(RECIPE.moveKey, (text) => text.replace("'other@example.com'", "'nobody@example.com'"));
    expect(run).toEqual([{ outcome: "unknown_account", changed: false, account_email: null }]);
    expect((await kiosk.validate(DEMO.key, DEMO.email)).status).toBe(200);
  });

  it("move an honest kiosk to a new key: the new key validates with the account's e-mail and reads the old key's own schedule; the old key still validates", async () => {
    const weekly = "DEMO-0000-0000-0002";
    const before = await kiosk.schedule(weekly);
    expect(before.type).toBe("weekly");
    const [moved] = await runRecipe(RECIPE.moveKioskToNewKey);
    expect(moved).toMatchObject({ old_key: weekly, schedules_moved: "1" });
    const newKey = moved.new_key as string;
    expect(newKey).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$/);

    expect(await kiosk.validate(newKey, DEMO.email)).toMatchObject({ status: 200, body: { key: newKey, email_address: DEMO.email } });
    expect(await kiosk.schedule(newKey)).toEqual({ ...before });
    expect((await kiosk.validate(weekly, DEMO.email)).status).toBe(200);
    expect((await kiosk.schedule(weekly)).type).toBe("daily");
  });

  it("move a kiosk to a new key, with a key that matches none: issues nothing", async () => {
    expect(await runRecipe(RECIPE.moveKioskToNewKey, (text) => text.replaceAll("DEMO-0000-0000-0002", "NONE-0000-0000-0000"))).toEqual([]);
  });

  it("see which kiosks have not been seen for a day: a kiosk last seen two days ago, not one seen 23 hours ago or now, nor a key never seen", async () => {
    // Sightings as the API writes them, timed by the database's clock.
    await database.db.query(
      `select cadence.record_kiosk_polls(
         array['DEMO-0000-0000-0004', 'DEMO-0000-0000-0002', 'DEMO-0000-0000-0001'],
         array[now() - interval '2 days', now() - interval '23 hours', now()],
         array['198.51.100.4', '198.51.100.2', '198.51.100.1']::inet[],
         array[null, null, null]::text[])`,
    );

    const unseen = await runRecipe(RECIPE.notSeenForADay);
    expect(unseen.map(({ license_key, account_email, active, last_seen_ip }) => ({ license_key, account_email, active, last_seen_ip })))
      .toEqual([{ license_key: OTHER.key, account_email: OTHER.email, active: true, last_seen_ip: "198.51.100.4" }]);
  });

  it("see what an account's kiosks should play now: each key's block in its own zone, with its proclamations in order", async () => {
    // A fixed moment, as staff may set one: Monday 2026-11-23 07:30 UTC. Key 2 reads its own weekly
    // schedule in Berlin (08:30 there: its Monday 08:00-10:00 block); keys 1 and 3 the account's
    // daily schedule in UTC (its 06:00-09:00 block).
    await database.db.query("update public.license_keys set time_zone = 'Europe/Berlin' where key = 'DEMO-0000-0000-0002'");
    const rows = await runRecipe(RECIPE.playingNow, (text) => text.replace(", now()) as p", ", '2026-11-23 07:30+00') as p"));
    expect(rows.map(({ license_key, time_zone, block_id, proclamations }) => ({ license_key, time_zone, block_id, proclamations }))).toEqual([
      { license_key: "DEMO-0000-0000-0001", time_zone: "UTC", block_id: "d0000000-0000-4000-8000-000000000001", proclamations: ["Abundance", "Peace"] },
      { license_key: "DEMO-0000-0000-0002", time_zone: "Europe/Berlin", block_id: "d0000000-0000-4000-8000-000000000004", proclamations: ["Abundance"] },
      { license_key: "DEMO-0000-0000-0003", time_zone: "UTC", block_id: "d0000000-0000-4000-8000-000000000001", proclamations: ["Abundance", "Peace"] },
    ]);
    // Two hours later nothing plays: 09:30 UTC is past the daily block, 10:30 in Berlin the weekly one's end.
    const later = await runRecipe(RECIPE.playingNow, (text) => text.replace(", now()) as p", ", '2026-11-23 09:30+00') as p"));
    expect(later.map((row) => row.block_id)).toEqual([null, null, null]);
    // As written (now()), it runs and lists the account's three keys.
    expect((await runRecipe(RECIPE.playingNow)).map((row) => row.license_key)).toEqual(["DEMO-0000-0000-0001", "DEMO-0000-0000-0002", "DEMO-0000-0000-0003"]);
  });

  it("add an event endpoint: it has a whsec_ secret, and the next change is owed to it", async () => {
    const [endpoint] = await runRecipe(RECIPE.addEventEndpoint);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await runRecipe(RECIPE.deactivateKey);
    const log = await database.db.query<{ type: string; state: string }>("select type, state from public.event_delivery_log where endpoint_id = $1", [endpoint.id]);
    expect(log).toEqual([{ type: "license_key.suspended", state: "queued" }]);
  });

  it("rotate an event endpoint's secret: a new one, the old one kept for the overlap", async () => {
    const [endpoint] = await runRecipe(RECIPE.addEventEndpoint);
    const [rotated] = await runRecipe(RECIPE.rotateEventSecret);
    expect(rotated.new_secret).toMatch(/^whsec_/);
    const [row] = await database.db.query<{ secret: string; previous_secret: string }>("select secret, previous_secret from public.event_endpoints where id = $1", [endpoint.id]);
    expect(row).toEqual({ secret: rotated.new_secret, previous_secret: endpoint.secret });
  });

  it("replay a key's events of the last day to an endpoint: each queued again, in order", async () => {
    // The demo key was created by the seed, within the day; then suspended.
    await runRecipe(RECIPE.deactivateKey);
    const [endpoint] = await runRecipe(RECIPE.addEventEndpoint);
    expect(await runRecipe(RECIPE.replayEvent)).toEqual([{ queued: "2" }]);
    const log = await database.db.query<{ type: string; replay: boolean }>(
      "select type, replay from public.event_delivery_log where endpoint_id = $1 order by delivery_id", [endpoint.id]);
    expect(log).toEqual([{ type: "license_key.created", replay: true }, { type: "license_key.suspended", replay: true }]);
  });

  it("read the event delivery log: each endpoint, the events waiting for it", async () => {
    await runRecipe(RECIPE.addEventEndpoint);
    await runRecipe(RECIPE.deactivateKey);
    expect(await runRecipe(RECIPE.deliveriesFailing)).toEqual([
      expect.objectContaining({ url: "https://hooks.example.com/cadence", enabled: true, failures: 0, waiting: "1" }),
    ]);
  });

  it("every recipe in sql/recipes is one this suite runs", () => {
    expect(readdirSync(recipes).sort()).toEqual(Object.values(RECIPE).sort());
  });
});
