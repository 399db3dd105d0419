import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { systemNameForm, systemNameShows } from "../../functions/app/license/schemas.ts";
import { setSystemNames } from "../../functions/app/license/store.ts";
import pg from "pg";
import postgres from "postgres";
import { testApp } from "../support/app.ts";
import { testClock } from "../support/clock.ts";
import { freshDatabase, itDirectOnly, type TestDatabase } from "../support/database.ts";

let database: TestDatabase;
let db: Database;
let request: ReturnType<typeof testApp>["request"];

beforeAll(async () => {
  // Enough connections for the race below to run in parallel inside Postgres, and a minute for each
  // statement: the race's subject is one holder, not the 2 s a request may wait, which beside two
  // CPU-bound processes one of its 40 requests went past (503).
  database = await freshDatabase({ max: 24, deadlineMs: 60_000 });
  db = database.db;
  ({ request } = testApp(db));
});
afterAll(() => database.drop());

const json = { "content-type": "application/json" };

async function put(key: string, body: unknown, headers: Record<string, string> = json) {
  const response = await request(`/api/v2/licenses/${key}/system-name`, {
    method: "PUT",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function validate(key: string, email: string, systemName: string) {
  const response = await request("/api/v2/license", {
    method: "POST",
    headers: json,
    body: JSON.stringify({ license_key: key, email_address: email, systemName }),
  });
  return { status: response.status, body: await response.json() };
}

const named = (systemName: string) => ({ status: 200, body: { systemName, systemNameStatus: "ok" } });
const invalidName = { status: 400, body: { message: "invalid_name" } };
const unknownLicense = { status: 404, body: { message: "unknown_license" } };
const nameTaken = { status: 409, body: { message: "name_taken" } };

let keySerial = 0;
let accountSerial = 0;

/** A new account with `count` active keys linked to it, so each test owns its system names. */
async function newAccount(count = 2) {
  accountSerial += 1;
  const email = `owner${accountSerial}@example.com`;
  const [{ id }] = await db.query<{ id: string }>(
    "insert into public.accounts (email, display_name) values ($1, 'Test') returning id",
    [email],
  );
  const keys: string[] = [];
  for (let i = 0; i < count; i++) keys.push(await newKey({ accountId: id, email }));
  return { id, email, keys };
}

/** A new active key, linked to an account or (accountId null) only carrying a stored e-mail. */
async function newKey({ accountId, email }: { accountId: string | null; email: string }) {
  keySerial += 1;
  const key = `S${String(keySerial).padStart(3, "0")}-0000-0000-0000`;
  await db.query("insert into public.license_keys (key, account_id, email) values ($1, $2, $3)", [key, accountId, email]);
  return key;
}

/** The stored name, and the row version: xmin changes with every update of the row, xmax with a lock. */
async function keyRow(key: string) {
  const [row] = await db.query<{ system_name: string | null; xmin: string; xmax: string; ctid: string }>(
    "select system_name, xmin::text, xmax::text, ctid::text from public.license_keys where key = $1",
    [key],
  );
  return row;
}

describe("PUT /api/v2/licenses/{licenseKey}/system-name", () => {
  it("answers 200 with the stored name, trimmed, and systemNameStatus ok", async () => {
    const { keys } = await newAccount(1);
    expect(await put(keys[0], { systemName: "  Front desk \n" })).toEqual(named("Front desk"));
    expect((await keyRow(keys[0])).system_name).toBe("Front desk");
  });

  it("answers 200 to re-sending the current name and writes nothing to the row", async () => {
    const { keys } = await newAccount(1);
    await put(keys[0], { systemName: "Lobby" });
    const before = await keyRow(keys[0]);
    expect(await put(keys[0], { systemName: " Lobby " })).toEqual(named("Lobby"));
    expect(await keyRow(keys[0])).toEqual(before);
    // The same probe sees a real write: the row's version moves.
    await put(keys[0], { systemName: "Hall" });
    expect((await keyRow(keys[0])).xmin).not.toBe(before.xmin);
  });

  it("lets a key change the case of its own name", async () => {
    const { keys } = await newAccount(2);
    await put(keys[0], { systemName: "Lobby" });
    expect(await put(keys[0], { systemName: "LOBBY" })).toEqual(named("LOBBY"));
    expect((await keyRow(keys[0])).system_name).toBe("LOBBY");
    expect(await put(keys[1], { systemName: "lobby" })).toEqual(nameTaken);
  });

  it("counts 1 to 40 characters as code points after trimming", async () => {
    const { keys } = await newAccount(1);
    expect(await put(keys[0], { systemName: " A " })).toEqual(named("A"));
    const forty = "🎵".repeat(40);
    expect(await put(keys[0], { systemName: ` ${forty} ` })).toEqual(named(forty));
    expect(await put(keys[0], { systemName: `${forty}x` })).toEqual(invalidName);
  });

  it("answers 400 invalid_name for a missing, empty, whitespace-only, too long or non-string name, and keeps the stored one", async () => {
    const { keys } = await newAccount(1);
    await put(keys[0], { systemName: "Lobby" });
    for (const body of [{}, { name: "Lobby" }, { systemName: "" }, { systemName: "  \t " }, { systemName: "x".repeat(41) },
      { systemName: 42 }, { systemName: null }, { systemName: ["Lobby"] }, { systemName: "a\u0000b" }]) {
      expect(await put(keys[0], body)).toEqual(invalidName);
    }
    expect((await keyRow(keys[0])).system_name).toBe("Lobby");
  });

  it("answers 400 invalid_name for malformed JSON, an empty body, a body that is not an object, and a content type other than JSON", async () => {
    const { keys } = await newAccount(1);
    for (const body of ['{"systemName": ', "", "[]", '"Lobby"', "null"]) {
      expect(await put(keys[0], body)).toEqual(invalidName);
    }
    expect(await put(keys[0], { systemName: "Lobby" }, {})).toEqual(invalidName);
    expect(await put(keys[0], { systemName: "Lobby" }, { "content-type": "text/plain" })).toEqual(invalidName);
    expect(await put(keys[0], { systemName: "Lobby" }, { "content-type": "application/json; charset=utf-8" })).toEqual(
      named("Lobby"),
    );
  });

  it("answers 404 unknown_license for an unknown key, and for one not of the key's shape", async () => {
    for (const key of ["ZZZZ-0000-0000-0001", "demo-0000-0000-0001", "DEMO-0000-0000-00011", "nope"]) {
      expect(await put(key, { systemName: "Lobby" })).toEqual(unknownLicense);
    }
    expect(await put("DEMO-0000-0000-0002", { systemName: "Lobby" })).toEqual(named("Lobby"));
  });

  it("answers the first failure in the spec's list when several apply: invalid_name, then unknown_license", async () => {
    expect(await put("ZZZZ-0000-0000-0001", { systemName: " " })).toEqual(invalidName);
    expect(await put("nope", "{")).toEqual(invalidName);
  });

  it("answers 409 name_taken when another key of the same account has the name in any case, and stores nothing", async () => {
    const { keys } = await newAccount(2);
    expect(await put(keys[0], { systemName: "Lobby" })).toEqual(named("Lobby"));
    expect(await put(keys[1], { systemName: "lOBBY" })).toEqual(nameTaken);
    expect((await keyRow(keys[1])).system_name).toBeNull();
    expect(await put(keys[1], { systemName: "Hall" })).toEqual(named("Hall"));
  });

  it("frees a name when its key takes another", async () => {
    const { keys } = await newAccount(2);
    await put(keys[0], { systemName: "Lobby" });
    await put(keys[0], { systemName: "Hall" });
    expect(await put(keys[1], { systemName: "Lobby" })).toEqual(named("Lobby"));
  });

  it("lets keys of different accounts share a name", async () => {
    const first = await newAccount(1);
    const second = await newAccount(1);
    expect(await put(first.keys[0], { systemName: "Lobby" })).toEqual(named("Lobby"));
    expect(await put(second.keys[0], { systemName: "LOBBY" })).toEqual(named("LOBBY"));
  });

  it("counts a key with no owner link in the account of its stored e-mail", async () => {
    const { email, keys } = await newAccount(1);
    const unlinked = await newKey({ accountId: null, email: email.toUpperCase() });
    expect(await put(keys[0], { systemName: "Lobby" })).toEqual(named("Lobby"));
    expect(await put(unlinked, { systemName: "lobby" })).toEqual(nameTaken);
    expect(await put(unlinked, { systemName: "Hall" })).toEqual(named("Hall"));
    expect(await put(keys[0], { systemName: "HALL" })).toEqual(nameTaken);
  });

  it("keeps names unique among unlinked keys of an e-mail that has no account", async () => {
    const first = await newKey({ accountId: null, email: "nobody-yet@example.com" });
    const second = await newKey({ accountId: null, email: "Nobody-Yet@example.com" });
    const elsewhere = await newKey({ accountId: null, email: "someone-else@example.com" });
    expect(await put(first, { systemName: "Lobby" })).toEqual(named("Lobby"));
    expect(await put(second, { systemName: "LOBBY" })).toEqual(nameTaken);
    expect(await put(elsewhere, { systemName: "LOBBY" })).toEqual(named("LOBBY"));
  });

  it("holds the rule in Postgres too: a direct write of a taken name is refused by the unique index", async () => {
    const { keys } = await newAccount(2);
    await put(keys[0], { systemName: "Lobby" });
    await expect(
      db.query("update public.license_keys set system_name = 'LOBBY' where key = $1", [keys[1]]),
    ).rejects.toThrow(/system_name_is_unique_per_account/);
  });

  it("counts characters that render as nothing (format characters: zero-width, bidi controls) as no part of the name: a name of only those is invalid_name", async () => {
    const { keys } = await newAccount(1);
    await put(keys[0], { systemName: "Lobby" });
    for (const systemName of ["\u202e\u200b", "\u200b", " \u200d\u2060 ", "\ufeff", "\u00ad\u061c", "\u{e0041}"]) {
      expect(await put(keys[0], { systemName }), JSON.stringify(systemName)).toEqual(invalidName);
    }
    // License validation answers `invalid` for it, as for a whitespace-only name, and still validates.
    const { email } = (await db.query<{ email: string }>("select email from public.license_keys where key = $1", [keys[0]]))[0];
    expect(await validate(keys[0], email, "\u202e\u200b")).toEqual({ status: 200, body: { key: keys[0], email_address: email, systemNameStatus: "invalid" } });
    expect((await keyRow(keys[0])).system_name).toBe("Lobby");
  });

  it("stores the name as a person sees it: format characters removed, then NFC, then trimmed; so look-alikes are name_taken", async () => {
    const { keys } = await newAccount(2);
    expect(await put(keys[0], { systemName: "lob\u200bby\u202e " })).toEqual(named("lobby"));
    expect((await keyRow(keys[0])).system_name).toBe("lobby");
    for (const lookAlike of ["lobby\u200b", "\u2066LOBBY\u2069", "lo\u00adbby"]) {
      expect(await put(keys[1], { systemName: lookAlike }), JSON.stringify(lookAlike)).toEqual(nameTaken);
    }
    // NFC: "e" + U+0301 is the precomposed U+00E9.
    expect(await put(keys[1], { systemName: "Cafe\u0301" })).toEqual(named("Caf\u00e9"));
    expect(await put(keys[0], { systemName: "CAF\u00c9" })).toEqual(nameTaken);
  });

  it("holds the form in Postgres too: a direct write of a name not in it is refused by system_name_is_normalised", async () => {
    const { keys } = await newAccount(1);
    for (const name of ["lobby\u200b", "\u200b", "Cafe\u0301"]) {
      await expect(db.query("update public.license_keys set system_name = $2 where key = $1", [keys[0], name]), JSON.stringify(name))
        .rejects.toThrow(/system_name_is_normalised|normal form/);
    }
  });

  it("keeps a name stored before the form as it is, lets its row change otherwise, and lets it block its look-alike", async () => {
    const { keys } = await newAccount(2);
    // As a row written before the rule: the trigger is what refuses it now, so it is set without it,
    // with the keys the migration that added them stored for every name.
    await db.query("alter table public.license_keys disable trigger system_name_is_normalised");
    try {
      await db.query(
        `update public.license_keys set system_name = $1, system_name_key = k.small_key, system_name_capitals_key = k.capitals_key
           from cadence.system_name_keys($1) as k where key = $2`,
        ["hall\u200b", keys[0]],
      );
    } finally {
      await db.query("alter table public.license_keys enable always trigger system_name_is_normalised");
    }
    await db.query("update public.license_keys set active = false where key = $1", [keys[0]]);
    expect((await keyRow(keys[0])).system_name).toBe("hall\u200b");
    expect(await put(keys[1], { systemName: "Hall" })).toEqual(nameTaken);
    expect(await put(keys[0], { systemName: "hall" })).toEqual(named("hall"));
  });

  itDirectOnly("has one form in TypeScript and in SQL: every code point on either side of a letter (so at either end, and after a base it may compose with); what renders as nothing (Cf, default-ignorables, U+2800, U+1D159) is removed by both", async () => {
    // A session of its own, without the API's statement deadline, as for the walk below. Direct only:
    // a function's answer is the same through PgBouncer, and the walk is 1.1 million calls.
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    onTestFinished(() => sql.end());
    const rendersNothing = /[\p{Cf}\p{Default_Ignorable_Code_Point}\u2800\u{1D159}]/u;
    let removed = 0;
    for (let plane = 0; plane <= 0x10; plane++) {
      const names: string[] = [];
      for (let point = plane * 0x10000 || 1; point < (plane + 1) * 0x10000; point++) {
        if (point >= 0xd800 && point <= 0xdfff) continue;
        const character = String.fromCodePoint(point);
        names.push(`${character}a${character}`);
        if (rendersNothing.test(character)) {
          removed += 1;
          expect(systemNameForm(`${character}a${character}`), point.toString(16)).toBe("a");
        }
      }
      const [{ forms }] = await sql<Array<{ forms: string[] }>>`
        select array(select cadence.system_name_form(n) from unnest(${names}::text[]) with ordinality as t(n, i) order by i) as forms`;
      const differ = names.filter((name, i) => forms[i] !== systemNameForm(name));
      expect(differ.map((name) => [...name].map((c) => c.codePointAt(0)?.toString(16)).join(" ")), `plane ${plane}`).toEqual([]);
    }
    // Unicode 17 (the SQL's tables): 170 format characters, 4,174 default-ignorables, 4,208 with the two
    // blank symbols. A Node with another Unicode fails here first: regenerate the tables for it.
    expect(removed).toBe(4208);
    const samples = [" x ", "\u3000x\u00a0", "e\u0301", "e\u200d\u0301", "\u212b", "\u115fLobby\u3164 ", "e\u034f\u0301"];
    const [{ forms }] = await sql<Array<{ forms: string[] }>>`
      select array(select cadence.system_name_form(n) from unnest(${samples}::text[]) with ordinality as t(n, i) order by i) as forms`;
    expect(forms).toEqual(samples.map(systemNameForm));
  });

  itDirectOnly("has one rule in TypeScript and in SQL for what shows: every code point alone, through the form, decided alike by both", async () => {
    // A session of its own, without the API's statement deadline: a plane is 65,536 calls, which a
    // busy machine may take longer over than an API statement is allowed, and the rule is the subject here.
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    onTestFinished(() => sql.end());
    for (let plane = 0; plane <= 0x10; plane++) {
      const names: string[] = [];
      for (let point = plane * 0x10000 || 1; point < (plane + 1) * 0x10000; point++) {
        if (point >= 0xd800 && point <= 0xdfff) continue;
        names.push(systemNameForm(String.fromCodePoint(point)));
      }
      const [{ shows }] = await sql<Array<{ shows: boolean[] }>>`
        select array(select cadence.system_name_shows(n) from unnest(${names}::text[]) with ordinality as t(n, i) order by i) as shows`;
      const differ = names.filter((name, i) => shows[i] !== systemNameShows(name));
      expect(differ.map((name) => name.codePointAt(0)?.toString(16)), `plane ${plane}`).toEqual([]);
    }
  });

  /** Issue 59's look-alikes of `Lobby`: each is `Lobby` on a kiosk's screen. */
  const lookAlikesOfLobby: Record<string, string> = {
    "a Cyrillic \u043e (U+043E)": "L\u043ebby",
    "a Greek omicron (U+03BF)": "L\u03bfbby",
    "fullwidth letters": "\uff2c\uff4f\uff42\uff42\uff59",
    "mathematical bold": "\u{1d40b}\u{1d428}\u{1d41b}\u{1d41b}\u{1d432}",
    "a circled L (U+24C1)": "\u24c1obby",
    "capitals": "LOBBY",
  };
  for (const [what, lookAlike] of Object.entries(lookAlikesOfLobby)) {
    it(`answers 409 name_taken to Lobby written with ${what} when another key of the account is Lobby, and stores nothing`, async () => {
      const { keys } = await newAccount(2);
      expect(await put(keys[0], { systemName: "Lobby" })).toEqual(named("Lobby"));
      expect(await put(keys[1], { systemName: lookAlike })).toEqual(nameTaken);
      expect((await keyRow(keys[1])).system_name).toBeNull();
      // And the other way round: the look-alike stored first takes the name from Lobby.
      const other = await newAccount(2);
      expect(await put(other.keys[0], { systemName: lookAlike })).toEqual(named(lookAlike));
      expect(await put(other.keys[1], { systemName: "lobby" })).toEqual(nameTaken);
    });
  }

  it("answers 409 name_taken to a name with a double space (or any run of spaces) beside the name with one", async () => {
    const { keys } = await newAccount(2);
    expect(await put(keys[0], { systemName: "Lobby Bar" })).toEqual(named("Lobby Bar"));
    for (const spaced of ["Lobby  Bar", "Lobby \u3000 Bar", "lobby\u00a0\u2003bar"]) {
      expect(await put(keys[1], { systemName: spaced }), JSON.stringify(spaced)).toEqual(nameTaken);
    }
  });

  it("answers 409 name_taken to a Latin capital written with the Cyrillic capital that looks like it (\u0412 for B, \u041d for H), though the small letters differ", async () => {
    const { keys } = await newAccount(2);
    expect(await put(keys[0], { systemName: "Bar Hall" })).toEqual(named("Bar Hall"));
    expect(await put(keys[1], { systemName: "\u0412ar \u041dall" })).toEqual(nameTaken);
    // Names are one in any case, so the small Cyrillic letters (a small capital B and H to look at) are
    // taken too: in capitals they are the Cyrillic capitals above.
    expect(await put(keys[1], { systemName: "\u0432ar \u043dall" })).toEqual(nameTaken);
    // Within the Cyrillic name itself, nothing is read across scripts: a name all in Cyrillic is its own.
    expect(await put(keys[1], { systemName: "\u0412\u0430\u0440" })).toEqual(named("\u0412\u0430\u0440"));
  });

  it("answers 409 name_taken to a look-alike through license validation too: conflict", async () => {
    const { email, keys } = await newAccount(2);
    expect(await put(keys[0], { systemName: "Lobby" })).toEqual(named("Lobby"));
    expect((await validate(keys[1], email, "L\u043ebby")).body.systemNameStatus).toBe("conflict");
    expect((await keyRow(keys[1])).system_name).toBeNull();
  });

  const withinOneScript: Array<[string, string]> = [["Barn", "Bam"], ["Kiosk 1", "Kiosk l"], ["Room 0", "Room O"]];
  for (const [first, second] of withinOneScript) {
    it(`keeps look-alikes within one script apart: ${first} and ${second} are two names`, async () => {
      const { keys } = await newAccount(2);
      expect(await put(keys[0], { systemName: first })).toEqual(named(first));
      expect(await put(keys[1], { systemName: second })).toEqual(named(second));
    });
  }

  it("keeps a name all in another script apart from the Latin name it looks like (whole-script look-alikes are not folded)", async () => {
    const { keys } = await newAccount(2);
    expect(await put(keys[0], { systemName: "Pop" })).toEqual(named("Pop"));
    expect(await put(keys[1], { systemName: "\u0420\u043e\u0440" })).toEqual(named("\u0420\u043e\u0440"));
  });

  it("answers 400 invalid_name to U+FFFC OBJECT REPLACEMENT CHARACTER alone, or anywhere in a name, and keeps the stored name", async () => {
    const { email, keys } = await newAccount(1);
    await put(keys[0], { systemName: "Lobby" });
    for (const name of ["\ufffc", " \ufffc ", "\ufffc\u200b", "Lobby\ufffc", "Lob\ufffcby"]) {
      expect(await put(keys[0], { systemName: name }), JSON.stringify(name)).toEqual(invalidName);
      expect((await validate(keys[0], email, name)).body.systemNameStatus, JSON.stringify(name)).toBe("invalid");
    }
    expect((await keyRow(keys[0])).system_name).toBe("Lobby");
    await expect(db.query("update public.license_keys set system_name = $1 where key = $2", ["\ufffc", keys[0]]))
      .rejects.toMatchObject({ code: "23514", constraint: "system_name_is_normalised" });
  });

  it("holds one name per look in Postgres too: a direct write of a look-alike is refused by a unique index, in small letters or in capitals", async () => {
    const { keys } = await newAccount(2);
    await put(keys[0], { systemName: "Bar" });
    await expect(db.query("update public.license_keys set system_name = $1 where key = $2", ["\uff42\uff41\uff52", keys[1]]))
      .rejects.toMatchObject({ code: "23505", constraint: "system_name_is_unique_per_account" });
    await expect(db.query("update public.license_keys set system_name = $1 where key = $2", ["\u0412ar", keys[1]]))
      .rejects.toMatchObject({ code: "23505", constraint: "system_name_capitals_are_unique_per_account" });
  });

  it("keeps a look-alike stored before the rule, lets it block its look-alikes, and judges it as a new name once it changes", async () => {
    const { keys } = await newAccount(3);
    await put(keys[0], { systemName: "Lobby" });
    // As the migration leaves a look-alike stored before the rule: kept (the trigger holds the flag, so it is set without it).
    await db.query("alter table public.license_keys disable trigger system_name_is_normalised");
    try {
      await db.query(
        `update public.license_keys set system_name = $1, system_name_kept = true, system_name_key = k.small_key, system_name_capitals_key = k.capitals_key
           from cadence.system_name_keys($1) as k where key = $2`,
        ["L\u043ebby", keys[1]],
      );
    } finally {
      await db.query("alter table public.license_keys enable always trigger system_name_is_normalised");
    }
    // A writer cannot set the flag.
    await db.query("update public.license_keys set system_name_kept = true where key = $1", [keys[2]]);
    expect((await db.query<{ kept: boolean }>("select system_name_kept as kept from public.license_keys where key = $1", [keys[2]]))[0].kept).toBe(false);
    await db.query("update public.license_keys set active = false where key = $1", [keys[1]]);
    expect(await put(keys[2], { systemName: "LOBBY" })).toEqual(nameTaken);
    expect(await put(keys[1], { systemName: "L\u043ebby" })).toEqual(named("L\u043ebby"));
    expect(await put(keys[1], { systemName: "Lobby Bar" })).toEqual(named("Lobby Bar"));
    expect(await put(keys[1], { systemName: "lobby" })).toEqual(nameTaken);
    expect((await db.query<{ kept: boolean }>("select system_name_kept as kept from public.license_keys where key = $1", [keys[1]]))[0].kept).toBe(false);
  });

  it("answers 413 for a body over 64 KiB", async () => {
    const { keys } = await newAccount(1);
    const body = JSON.stringify({ systemName: "Lobby", pad: "x".repeat(64 * 1024) });
    expect(await put(keys[0], body)).toEqual({ status: 413, body: { message: "request body must not exceed 64 KiB" } });
  });

  it("answers 429 with Retry-After on the 11th request in a minute from one client IP, before any other check", async () => {
    const clock = testClock();
    const limited = testApp(db, { now: clock.now });
    const { keys } = await newAccount(1);
    const from = (key: string, body: string) =>
      limited.request(`/api/v2/licenses/${key}/system-name`, {
        method: "PUT",
        headers: { ...json, "x-forwarded-for": "203.0.113.9" },
        body,
      });
    for (let i = 0; i < 10; i++) expect((await from(keys[0], JSON.stringify({ systemName: "Lobby" }))).status).toBe(200);
    const refused = await from("nope", "{");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  describe("two kiosks of one account racing for one name", () => {
    /**
     * Many PUTs and validations carrying the name, from both keys at once, over parallel connections:
     * exactly one key ends up with the name; every request of that key succeeds and every request of
     * the other is refused (409 / conflict); none fails.
     */
    async function race(keys: [string, string], email: string, rounds: number) {
      for (let round = 0; round < rounds; round++) {
        const name = `Kiosk ${round}`;
        const spellings = [name, name.toUpperCase(), name.toLowerCase()];
        const attempts = Array.from({ length: 40 }, (_, i) => {
          const key = keys[i % 2];
          const systemName = spellings[i % 3];
          return i % 4 < 2
            ? put(key, { systemName }).then((answer) => ({ key, won: answer.status === 200, answer }))
            : validate(key, email, systemName).then((answer) => ({ key, won: answer.body.systemNameStatus === "ok", answer }));
        });
        const results = await Promise.all(attempts);

        for (const { answer } of results) {
          expect([200, 409]).toContain(answer.status);
          if (answer.status === 200 && "systemNameStatus" in answer.body) {
            expect(["ok", "conflict"]).toContain(answer.body.systemNameStatus);
          }
        }
        const holders = await db.query<{ key: string }>(
          "select key from public.license_keys where key = any($1) and lower(system_name) = lower($2)",
          [keys, name],
        );
        expect(holders).toHaveLength(1);
        const winner = holders[0].key;
        for (const { key, won, answer } of results) {
          expect({ key, won, answer }).toEqual({ key, won: key === winner, answer });
        }
      }
    }

    it("lets exactly one key of two linked keys hold the name, round after round", async () => {
      const { keys, email } = await newAccount(2);
      await race([keys[0], keys[1]], email, 6);
    });

    it("lets exactly one key hold the name when one key is linked and the other has only the account's e-mail", async () => {
      const { keys, email } = await newAccount(1);
      const unlinked = await newKey({ accountId: null, email });
      await race([keys[0], unlinked], email, 6);
    });
  });

  describe("names asked for together: one statement a batch (cadence.set_system_names)", () => {
    const names = (asks: Array<[string, string]>) => setSystemNames(db, asks.map(([key, name]) => ({ key, name })));

    it("answers each name of a batch as it answers it alone: ok, unchanged, taken, unknown_license", async () => {
      const { keys } = await newAccount(3);
      expect(await names([[keys[0], "Lobby"], [keys[1], "Bar"]])).toEqual(["ok", "ok"]);
      expect(await names([[keys[2], "Terrace"], [keys[0], "Lobby"], [keys[2 - 1], "lobby"], ["ZZZZ-0000-0000-0000", "Lobby"]]))
        .toEqual(["ok", "unchanged", "taken", "unknown_license"]);
      expect([(await keyRow(keys[0])).system_name, (await keyRow(keys[1])).system_name, (await keyRow(keys[2])).system_name])
        .toEqual(["Lobby", "Bar", "Terrace"]);
    });

    it("never fails one name for another's failure: the names beside a taken one or an unknown key are stored", async () => {
      const first = await newAccount(2);
      const second = await newAccount(2);
      await names([[first.keys[0], "Taken"]]);
      expect(await names([[first.keys[1], "TAKEN"], ["ZZZZ-0000-0000-0001", "Any"], [second.keys[0], "Garden"], [second.keys[1], "Hall"]]))
        .toEqual(["taken", "unknown_license", "ok", "ok"]);
      expect((await keyRow(first.keys[1])).system_name).toBeNull();
      expect([(await keyRow(second.keys[0])).system_name, (await keyRow(second.keys[1])).system_name]).toEqual(["Garden", "Hall"]);
    });

    it("gives a name two keys of one account ask for in one batch, in any case, to the first asked; the other is taken", async () => {
      const { keys } = await newAccount(3);
      expect(await names([[keys[1], "Patio"], [keys[0], "PATIO"], [keys[2], "patio"]])).toEqual(["ok", "taken", "taken"]);
      const holders = await db.query<{ key: string }>("select key from public.license_keys where key = any($1) and lower(system_name) = 'patio'", [keys]);
      expect(holders).toEqual([{ key: keys[1] }]);
    });

    it("gives it to the first asked when one key is linked and the other has only the account's e-mail", async () => {
      const { keys, email } = await newAccount(1);
      const unlinked = await newKey({ accountId: null, email });
      expect(await names([[unlinked, "Cellar"], [keys[0], "cellar"]])).toEqual(["ok", "taken"]);
      expect([(await keyRow(unlinked)).system_name, (await keyRow(keys[0])).system_name]).toEqual(["Cellar", null]);
    });

    it("lets keys of different accounts take the same name in one batch", async () => {
      const first = await newAccount(1);
      const second = await newAccount(1);
      expect(await names([[first.keys[0], "Entrance"], [second.keys[0], "Entrance"]])).toEqual(["ok", "ok"]);
    });

    it("names a key asked for twice in one batch twice, in the order asked", async () => {
      const { keys } = await newAccount(1);
      expect(await names([[keys[0], "Before"], [keys[0], "After"], [keys[0], "After"]])).toEqual(["ok", "ok", "unchanged"]);
      expect((await keyRow(keys[0])).system_name).toBe("After");
    });

    it("counts a name a key gives up in the same batch as still its own, so two keys cannot swap names in one batch", async () => {
      const { keys } = await newAccount(2);
      await names([[keys[0], "North"], [keys[1], "South"]]);
      expect(await names([[keys[0], "South"], [keys[1], "North"]])).toEqual(["taken", "taken"]);
      expect([(await keyRow(keys[0])).system_name, (await keyRow(keys[1])).system_name]).toEqual(["North", "South"]);
    });

    it("checks a name against its account's names through their index, never reading every named key of the fleet", async () => {
      const { id, email, keys } = await newAccount(2);
      await names([[keys[0], "Desk"]]);
      // An account of a fleet's size, its statistics known as autovacuum would soon know them: on a
      // few rows every index costs alike, and the probe of one key's column could read the account
      // through the other key's index.
      await db.query(
        `insert into public.license_keys (key, account_id, email, system_name)
         select 'PROB-0000-' || lpad((n / 10000)::text, 4, '0') || '-' || lpad((n % 10000)::text, 4, '0'), $1, $2, 'Desk ' || n
           from generate_series(1, 2000) as n`,
        [id, email],
      );
      await db.query("analyze public.license_keys");
      // auto_explain (contrib) sends the plan of each statement inside the function as a LOG message.
      const plans: string[] = [];
      const client = postgres(database.url, { max: 1, onnotice: (notice) => void plans.push(String(notice.message)) });
      try {
        await client.begin(async (tx) => {
          await tx.unsafe("load 'auto_explain'");
          // A test table is small enough to read whole; the check must still be able to use the index.
          await tx.unsafe("set local enable_seqscan = off; set local auto_explain.log_min_duration = 0; set local auto_explain.log_nested_statements = on; set local client_min_messages = log");
          expect(await tx.unsafe("select outcome from cadence.set_system_names($1::text[], array['desk'])", [[keys[1]]])).toEqual([{ outcome: "taken" }]);
        });
      } finally {
        await client.end();
      }
      const plan = plans.join("\n");
      expect(plan).toMatch(/using system_name_is_unique_per_account on license_keys other[^\n]*\n\s*Index Cond: [^\n]*\(system_name_key = /);
      expect(plan).toMatch(/using system_name_capitals_are_unique_per_account on license_keys other[^\n]*\n\s*Index Cond: [^\n]*\(system_name_capitals_key = /);
    });

    it("lets the unique index decide between a linked key and an unlinked key of one account claiming a name at once: the later waits for the first, then is taken", async () => {
      const { keys, email } = await newAccount(1);
      const unlinked = await newKey({ accountId: null, email });
      const first = new pg.Client(database.url);
      const later = new pg.Client(database.url);
      await Promise.all([first.connect(), later.connect()]);
      try {
        await first.query("begin");
        expect((await first.query("select outcome from cadence.set_system_names($1, $2)", [[keys[0]], ["Porch"]])).rows).toEqual([{ outcome: "ok" }]);
        const claim = later.query("select outcome from cadence.set_system_names($1, $2) /* the later claim */", [[unlinked], ["PORCH"]]);
        // It waits on the first transaction's index entry, holding no advisory lock (its backend found
        // by its query, as a pooler may serve it from any connection).
        const locksOfLater = (kind: string) => db.query(`
          select l.granted from pg_locks as l join pg_stat_activity as a on a.pid = l.pid
           where a.query like '%/* the later claim */%' and a.pid <> pg_backend_pid() and l.locktype = $1`, [kind]);
        await expect.poll(async () => (await locksOfLater("transactionid")).filter((lock) => !lock.granted).length).toBe(1);
        expect(await locksOfLater("advisory")).toHaveLength(0);
        await first.query("commit");
        expect((await claim).rows).toEqual([{ outcome: "taken" }]);
      } finally {
        await Promise.all([first.end(), later.end()]);
      }
      expect([(await keyRow(keys[0])).system_name, (await keyRow(unlinked)).system_name]).toEqual(["Porch", null]);
    });

    it("never deadlocks two batches naming keys of one account with the same names in opposite orders: each writes its names in name order", async () => {
      const { keys } = await newAccount(4);
      // A scratch trigger holds the first batch just before it writes its second name, while the
      // test holds an advisory lock: by then it has written one name, as a batch in the middle of its writes.
      const pause = new pg.Client(database.url);
      const [firstBatch, secondBatch] = [new pg.Client(database.url), new pg.Client(database.url)];
      await Promise.all([pause.connect(), firstBatch.connect(), secondBatch.connect()]);
      await db.script(`
        create schema if not exists scratch;
        create or replace function scratch.pause_batch() returns trigger language plpgsql as $$
        begin
          perform pg_advisory_xact_lock_shared(5353);
          return new;
        end $$;
        create trigger pause_batch before update of system_name on public.license_keys
          for each row when (new.system_name = 'West Wing') execute function scratch.pause_batch();`);
      try {
        // Each batch's backend found by its query, as a pooler may serve it from any connection.
        const waits = (batch: string) =>
          expect.poll(async () => (await db.query("select from pg_stat_activity where wait_event_type = 'Lock' and query like $1", [`%/* ${batch} */%`])).length).toBe(1);
        await pause.query("begin");
        await pause.query("select pg_advisory_xact_lock(5353)");
        const first = firstBatch.query("select n, outcome from cadence.set_system_names($1, $2) /* first batch */ order by n", [[keys[0], keys[1]], ["West Wing", "East Wing"]]);
        await waits("first batch");
        const second = secondBatch.query("select n, outcome from cadence.set_system_names($1, $2) /* second batch */ order by n", [[keys[2], keys[3]], ["west wing", "east wing"]]);
        await waits("second batch");
        await pause.query("commit");
        expect((await first).rows.map((row) => row.outcome)).toEqual(["ok", "ok"]);
        expect((await second).rows.map((row) => row.outcome)).toEqual(["taken", "taken"]);
      } finally {
        await db.script("drop trigger pause_batch on public.license_keys; drop schema scratch cascade;");
        await Promise.all([pause.end(), firstBatch.end(), secondBatch.end()]);
      }
      expect((await Promise.all(keys.map(keyRow))).map((row) => row.system_name)).toEqual(["West Wing", "East Wing", null, null]);
    });

    it("answers taken for that key alone when another writer stores the name while the batch waits to write it", async () => {
      const { keys } = await newAccount(3);
      const staff = postgres(database.url, { max: 1, onnotice: () => {} });
      const watcher = postgres(database.url, { max: 1, onnotice: () => {} });
      try {
        // A dashboard edit, not yet committed: it takes no name lock, only the unique index sees it.
        const edit = staff.begin(async (tx) => {
          await tx.unsafe("update public.license_keys set system_name = 'Office' where key = $1", [keys[0]]);
          const batch = names([[keys[1], "office"], [keys[2], "Studio"]]);
          // The batch's write of 'office' waits on the uncommitted edit's index entry; then the edit commits.
          while ((await watcher.unsafe("select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%set_system_names%'")).length === 0);
          // Wrapped, so the transaction commits now instead of awaiting the batch.
          return { batch };
        });
        expect(await (await edit).batch).toEqual(["taken", "ok"]);
      } finally {
        await staff.end();
        await watcher.end();
      }
      expect([(await keyRow(keys[0])).system_name, (await keyRow(keys[1])).system_name, (await keyRow(keys[2])).system_name])
        .toEqual(["Office", null, "Studio"]);
    });
  });
});

/** The first code point of each general category, skipping default-ignorables (the Hangul fillers are letters that show nothing). */
function firstOf(category: string): string {
  const of = new RegExp(`\\p{gc=${category}}`, "u");
  const ignorable = /\p{Default_Ignorable_Code_Point}/u;
  for (let point = 0x20; point <= 0x10ffff; point++) {
    if (category !== "Cs" && point >= 0xd800 && point <= 0xdfff) continue;
    const text = String.fromCharCode(...(point > 0xffff ? [0xd800 + ((point - 0x10000) >> 10), 0xdc00 + ((point - 0x10000) & 0x3ff)] : [point]));
    if (of.test(text) && !ignorable.test(text)) return text;
  }
  throw new Error(`no code point of ${category}`);
}

describe("system names that show something: every Unicode general category, through license validation and the system-name write", () => {
  /** What a category is, for a name: shows (letters, digits, punctuation, symbols), shows nothing beside another (spaces, marks, format characters), or refused (controls, private use, unassigned, surrogates, line and paragraph separators). */
  const kinds: Record<string, "shows" | "blank" | "refused"> = {
    Lu: "shows", Ll: "shows", Lt: "shows", Lm: "shows", Lo: "shows",
    Nd: "shows", Nl: "shows", No: "shows",
    Pc: "shows", Pd: "shows", Ps: "shows", Pe: "shows", Pi: "shows", Pf: "shows", Po: "shows",
    Sm: "shows", Sc: "shows", Sk: "shows", So: "shows",
    Zs: "blank", Zl: "refused", Zp: "refused",
    Mn: "blank", Mc: "blank", Me: "blank", Cf: "blank",
    Cc: "refused", Co: "refused", Cn: "refused", Cs: "refused",
  };
  /** The cases, each a name that showed nothing or broke a screen. */
  const blanks = {
    "Hangul filler U+115F": "\u115f", "Hangul filler U+1160": "\u1160", "Hangul filler U+3164": "\u3164", "Hangul filler U+FFA0": "\uffa0",
    "braille blank U+2800": "\u2800", "variation selector U+FE0F": "\ufe0f", "variation selector U+E0100": "\u{e0100}",
    "combining mark U+0301": "\u0301", "control U+0001": "\u0001", "control U+007F": "\u007f", "control U+0085": "\u0085",
    "private use U+E000": "\ue000", "noncharacter U+FDD0": "\ufdd0", "noncharacter U+FFFE": "\ufffe",
  };

  let account: Awaited<ReturnType<typeof newAccount>>;
  beforeAll(async () => {
    account = await newAccount(1);
  });

  /** The PUT's answer and validation's systemNameStatus for one name. */
  async function outcome(name: string) {
    const written = await put(account.keys[0], { systemName: name });
    const validated = await validate(account.keys[0], account.email, name);
    return { put: written.status === 200 ? "ok" : written.body.message, validation: validated.body.systemNameStatus };
  }

  for (const [category, kind] of Object.entries(kinds)) {
    it(`${category}: alone ${kind === "shows" ? "a name" : "invalid_name"}; beside a letter ${kind === "refused" ? "still invalid_name" : "a name"}`, async () => {
      const character = firstOf(category);
      const alone = await outcome(character);
      const beside = await outcome(`Kiosk ${character}x`);
      // Validation re-sends the name the PUT just stored: `ok` either way when it is valid.
      expect(alone).toEqual(kind === "shows" ? { put: "ok", validation: "ok" } : { put: "invalid_name", validation: "invalid" });
      expect(beside).toEqual(kind === "refused" ? { put: "invalid_name", validation: "invalid" } : { put: "ok", validation: "ok" });
    });
  }

  it("refuses the issue's blank and broken names alone, and keeps the stored name", async () => {
    expect(await put(account.keys[0], { systemName: "Lobby" })).toEqual(named("Lobby"));
    for (const [what, name] of Object.entries(blanks)) {
      expect(await outcome(name), what).toEqual({ put: "invalid_name", validation: "invalid" });
    }
    expect((await keyRow(account.keys[0])).system_name).toBe("Lobby");
  });

  it("holds the rule in Postgres too: a direct write of a name that shows nothing is refused, naming the rule", async () => {
    for (const name of Object.values(blanks)) {
      await expect(db.query("update public.license_keys set system_name = $1 where key = $2", [name, account.keys[0]]))
        .rejects.toMatchObject({ code: "23514", constraint: "system_name_is_normalised" });
    }
  });
});

describe("characters that render as nothing never make two names differ nor a name alone; line and paragraph separators are refused: through the system-name write and license validation", () => {
  /** Default-ignorables (Hangul fillers, variation selectors, U+034F, reserved ones), blank symbols, and a format character as before. */
  const rendersNothing = {
    "Hangul choseong filler U+115F": "\u115f",
    "Hangul jungseong filler U+1160": "\u1160",
    "Hangul filler U+3164": "\u3164",
    "halfwidth Hangul filler U+FFA0": "\uffa0",
    "braille pattern blank U+2800": "\u2800",
    "musical symbol null notehead U+1D159": "\u{1d159}",
    "combining grapheme joiner U+034F": "\u034f",
    "variation selector-1 U+FE00": "\ufe00",
    "variation selector-16 U+FE0F": "\ufe0f",
    "variation selector-17 U+E0100": "\u{e0100}",
    "variation selector-256 U+E01EF": "\u{e01ef}",
    "Mongolian free variation selector one U+180B": "\u180b",
    "Khmer vowel inherent U+17B4": "\u17b4",
    "reserved default-ignorable U+2065": "\u2065",
    "reserved default-ignorable U+E0FFF": "\u{e0fff}",
    "zero width space U+200B": "\u200b",
  };
  const separators = { "line separator U+2028": "\u2028", "paragraph separator U+2029": "\u2029" };
  const refused = { put: "invalid_name", validation: "invalid" };

  /** The PUT's answer and validation's systemNameStatus for one name on one key. */
  async function both(key: string, email: string, name: string) {
    const written = await put(key, { systemName: name });
    const validated = await validate(key, email, name);
    return { put: written.status === 200 ? "ok" : written.body.message, validation: validated.body.systemNameStatus };
  }

  for (const [what, blank] of Object.entries(rendersNothing)) {
    it(`${what}: alone no name; before, inside or after a name, the same name (stored without it; name_taken / conflict on another key)`, async () => {
      const { email, keys } = await newAccount(2);
      for (const name of [blank, blank + blank, ` ${blank} `]) expect(await both(keys[0], email, name), JSON.stringify(name)).toEqual(refused);

      // The system-name write stores the name without it; validation on another key is then a conflict.
      expect(await put(keys[0], { systemName: `${blank}Lobby` })).toEqual(named("Lobby"));
      for (const lookAlike of [`${blank}Lobby`, `Lobby${blank}`, `Lob${blank}by`, `${blank}LOBBY${blank}`]) {
        expect(await put(keys[1], { systemName: lookAlike }), JSON.stringify(lookAlike)).toEqual(nameTaken);
        expect((await validate(keys[1], email, lookAlike)).body.systemNameStatus, JSON.stringify(lookAlike)).toBe("conflict");
      }
      // Validation stores it without it too; the system-name write on another key is then taken.
      expect((await validate(keys[1], email, `Hall${blank}`)).body.systemNameStatus).toBe("ok");
      expect(await put(keys[0], { systemName: `H${blank}all` })).toEqual(nameTaken);
      expect([(await keyRow(keys[0])).system_name, (await keyRow(keys[1])).system_name]).toEqual(["Lobby", "Hall"]);
      // Re-sending a stored name with it is re-sending the stored name.
      expect(await put(keys[0], { systemName: `Lobby${blank}` })).toEqual(named("Lobby"));
      expect((await validate(keys[1], email, `${blank}Hall`)).body.systemNameStatus).toBe("ok");
    });
  }

  for (const [what, separator] of Object.entries(separators)) {
    it(`${what}: refused in a name; at either end trimmed, as a newline is`, async () => {
      const { email, keys } = await newAccount(2);
      await put(keys[0], { systemName: "Desk" });
      for (const name of [`Lob${separator}by`, `Front desk${separator}2`, separator, `${separator} ${separator}`, `x\u3164${separator}\u3164y`]) {
        expect(await both(keys[0], email, name), JSON.stringify(name)).toEqual(refused);
      }
      expect((await keyRow(keys[0])).system_name).toBe("Desk");
      expect(await put(keys[0], { systemName: `Lobby${separator}` })).toEqual(named("Lobby"));
      expect(await put(keys[1], { systemName: `${separator}lobby` })).toEqual(nameTaken);
      expect((await validate(keys[1], email, `${separator}LOBBY${separator}`)).body.systemNameStatus).toBe("conflict");
    });
  }

  it("counts the 1 to 40 characters after removing what renders as nothing, in both routes", async () => {
    const { email, keys } = await newAccount(2);
    const forty = "x".repeat(40);
    expect(await put(keys[0], { systemName: `${forty}\ufe0f` })).toEqual(named(forty));
    expect((await validate(keys[1], email, `\u3164${"y".repeat(40)}\u2800\u{1d159}`)).body.systemNameStatus).toBe("ok");
    expect((await keyRow(keys[1])).system_name).toBe("y".repeat(40));
    expect(await both(keys[0], email, `${"z".repeat(41)}\u3164`)).toEqual(refused);
  });

  it("holds the rule in Postgres too: a direct write of a name with such a character, or a separator inside, is refused, naming the rule", async () => {
    const { keys } = await newAccount(1);
    for (const name of ["\u115fLobby", "Lobby\u3164", "\u2800Lobby", "\u{1d159}", "Lob\u034fby", "Lobby\ufe0f", "Lob\u2028by", "Lob\u2029by"]) {
      await expect(db.query("update public.license_keys set system_name = $1 where key = $2", [name, keys[0]]), JSON.stringify(name))
        .rejects.toMatchObject({ code: "23514", constraint: "system_name_is_normalised" });
    }
  });
});
