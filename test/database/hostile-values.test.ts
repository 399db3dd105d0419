import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimAccountsDueForAuth, linkAuthUser, markAuthLinkFailed } from "../../functions/app/auth-users/store.ts";
import { enqueueHookEmails } from "../../functions/app/auth-hook/store.ts";
import { systemNameShows } from "../../functions/app/license/schemas.ts";
import { readEntitlements } from "../../functions/app/proclamations/store.ts";
import type { Database } from "../../functions/app/db/database.ts";
import { isUnavailable } from "../../functions/app/db/unavailable.ts";
import { POLL_GAP_MS } from "../../functions/app/kiosk/sightings.ts";
import { firstSighting, recordSightings } from "../../functions/app/kiosk/store.ts";
import { setSystemNames, validateAndNameLicenses, validateLicenses } from "../../functions/app/license/store.ts";
import { deliverEmail } from "../../functions/app/mail/outbox.ts";
import { onboard, recordNonce } from "../../functions/app/onboarding/store.ts";
import { readLegacySchedulesIfChanged, readSchedulesIfChanged } from "../../functions/app/schedule/store.ts";
import { memoryLogger } from "../support/app.ts";
import { freshDatabase, type TestDatabase } from "../support/database.ts";

/**
 * Text that would end a quoted string, a comment or a dollar quote, or start a second statement,
 * if it were ever written into a statement's text: quotes, backslashes, `;`, `--`, `/*`, `$q$`, a
 * placeholder, newlines, non-ASCII. Each is trimmed and at most 40 characters, so it is a valid
 * system name and display name as well.
 */
const HOSTILE = [
  "it's",
  "''",
  "\\",
  "a\\'b",
  'say "hi"',
  "x'); delete from public.accounts; --",
  "-- the rest is a comment",
  "/* an open comment",
  "$q$ select 1; $q$",
  "$$",
  "$1",
  "E'x'",
  "line\nbreak\r\n\ttab",
  "ünïcødé ✓ 🎧",
  "{a,b}",
  "NULL",
];
/** An address the accounts table admits (no whitespace, an @ and a dot) that carries the same. */
const HOSTILE_EMAIL = `o'hara";--/*$q$\\é@exa'mple.com`;
const OWNER = "demo@example.com";
const KEY = "DEMO-0000-0000-0001";
const UNKNOWN_KEY = "NONE-0000-0000-0000";
const NUL = "a\u0000b";

let database: TestDatabase;
let db: Database;

beforeAll(async () => {
  database = await freshDatabase({ max: 2 });
  db = database.db;
});
afterAll(() => database.drop());

/** A digest of every row of every table of ours, by table. */
async function tables(): Promise<Record<string, string>> {
  const names = await db.query<{ name: string }>(
    "select format('%I.%I', schemaname, tablename) as name from pg_catalog.pg_tables where schemaname in ('public', 'cadence') order by 1",
  );
  const digests: Record<string, string> = {};
  for (const { name } of names) {
    const [{ digest }] = await db.query<{ digest: string }>(
      `select md5(coalesce(string_agg(t::text, e'\\n' order by t::text), '')) as digest from ${name} t`,
    );
    digests[name] = digest;
  }
  return digests;
}

/** Runs `work` and answers the tables whose rows it changed. */
async function changedBy(work: () => Promise<unknown>): Promise<string[]> {
  const before = await tables();
  await work();
  const after = await tables();
  expect(Object.keys(after)).toEqual(Object.keys(before));
  return Object.keys(after).filter((name) => after[name] !== before[name]);
}

/** The hostile values a system name may hold: one with control characters (line breaks, tabs) is refused as a name (cadence.system_name_shows). */
const HOSTILE_NAMES = HOSTILE.filter(systemNameShows);

let serial = 0;
/** A new account with one active key, for a test that writes to them. */
async function newAccount() {
  serial += 1;
  const email = `hostile${serial}@example.com`;
  const key = `HSTL-${String(serial).padStart(4, "0")}-0000-0000`;
  const [{ id }] = await db.query<{ id: string }>("insert into public.accounts (email, display_name) values ($1, 'Test') returning id::text", [email]);
  await db.query("insert into public.license_keys (key, account_id, email) values ($1, $2::uuid, $3)", [key, id, email]);
  return { id, email, key };
}

describe("hostile values in every store function: bind parameters, read back as data", () => {
  it("validateAndNameLicenses and validateLicenses compare them as data: an unknown key or user, nothing written", async () => {
    const changed = await changedBy(async () => {
      for (const value of [...HOSTILE, HOSTILE_EMAIL]) {
        expect(await validateAndNameLicenses(db, [{ key: value, email: value, systemName: value }])).toEqual([{ outcome: "key_not_found" }]);
        expect(await validateLicenses(db, [{ key: KEY, email: value }])).toEqual([{ outcome: "user_not_found" }]);
      }
      const inputs = [...HOSTILE, HOSTILE_EMAIL].map((value) => ({ key: value, email: value }));
      expect(await validateLicenses(db, inputs)).toEqual(inputs.map(() => ({ outcome: "key_not_found" })));
    });
    expect(changed).toEqual([]);
  });

  it("validateAndNameLicenses stores each as the system name, exactly, and nothing else", async () => {
    const { key, email } = await newAccount();
    const changed = await changedBy(async () => {
      for (const value of HOSTILE_NAMES) {
        expect(await validateAndNameLicenses(db, [{ key, email, systemName: value }])).toMatchObject([{ outcome: "valid", systemNameStatus: "ok" }]);
        const [row] = await db.query<{ system_name: string }>("select system_name from public.license_keys where key = $1", [key]);
        expect(row.system_name).toBe(value);
      }
    });
    // The name's change is also its event (supabase/schemas/14_events.sql).
    expect(changed).toEqual(["public.events", "public.license_keys"]);
  });

  it("setSystemNames stores each exactly, and nothing else", async () => {
    const { key } = await newAccount();
    const changed = await changedBy(async () => {
      for (const value of HOSTILE_NAMES) {
        expect(await setSystemNames(db, [{ key, name: value }])).toEqual(["ok"]);
        const [row] = await db.query<{ system_name: string }>("select system_name from public.license_keys where key = $1", [key]);
        expect(row.system_name).toBe(value);
      }
      expect(await setSystemNames(db, [{ key: HOSTILE[5], name: HOSTILE[6] }])).toEqual(["unknown_license"]);
    });
    // The name's change is also its event (supabase/schemas/14_events.sql).
    expect(changed).toEqual(["public.events", "public.license_keys"]);
  });

  it("the schedule and entitlement reads answer them as an unknown key is answered, and write nothing", async () => {
    const changed = await changedBy(async () => {
      const reads = [...HOSTILE, HOSTILE_EMAIL].map((value) => ({ key: value, email: value, version: value }));
      const unknown = { key: UNKNOWN_KEY, email: OWNER, version: null };
      const [unknownSchedule] = await readSchedulesIfChanged(db, [unknown]);
      expect(await readSchedulesIfChanged(db, reads)).toEqual(reads.map(() => unknownSchedule));
      const [unknownLegacy] = await readLegacySchedulesIfChanged(db, [unknown]);
      expect(await readLegacySchedulesIfChanged(db, reads)).toEqual(reads.map(() => unknownLegacy));
      const [unknownEntitlement] = await readEntitlements(db, [unknown]);
      expect(await readEntitlements(db, reads)).toEqual(reads.map(() => unknownEntitlement));
      const [notOwner] = await readEntitlements(db, [{ key: KEY, email: "someone@example.com" }]);
      expect(await readEntitlements(db, reads.map((read) => ({ key: KEY, email: read.email })))).toEqual(reads.map(() => notOwner));
    });
    expect(changed).toEqual([]);
  });

  it("recordSightings skips keys that do not exist, whatever they hold", async () => {
    const changed = await changedBy(() =>
      recordSightings(
        db,
        HOSTILE.map((value) => [value, { ...firstSighting(Date.now(), null), version: value, firstName: value, lastName: value, bursts: [{ first: 0, last: 0, starting: true, network: null }] }] as const),
        POLL_GAP_MS,
      ),
    );
    expect(changed).toEqual([]);
  });

  it("recordNonce stores each exactly, and knows it again", async () => {
    const changed = await changedBy(async () => {
      for (const value of HOSTILE) {
        expect(await recordNonce(db, value, Date.now())).toBe(true);
        expect(await recordNonce(db, value, Date.now())).toBe(false);
      }
    });
    expect(changed).toEqual(["public.webhook_nonces"]);
    const rows = await db.query<{ nonce: string }>("select nonce from public.webhook_nonces where nonce = any($1::text[])", [HOSTILE]);
    expect(rows.map((row) => row.nonce).sort()).toEqual([...HOSTILE].sort());
  });

  it("onboard stores the e-mail, the name and the message exactly, and nothing else", async () => {
    const changed = await changedBy(async () => {
      for (const [at, value] of HOSTILE.entries()) {
        const key = `ONBD-${String(at).padStart(4, "0")}-0000-0000`;
        const message = { to: HOSTILE_EMAIL, subject: value, text: value, html: value };
        const row = await onboard(db, { email: HOSTILE_EMAIL, name: value, key, message, nowMs: Date.now() });
        expect(row.key_issued).toBe(true);
        const [stored] = await db.query<{ email: string; display_name: string; owner: string; subject: string; text_body: string; html_body: string }>(
          `select a.email, a.display_name, k.email as owner, o.subject, o.text_body, o.html_body
           from public.accounts a join public.license_keys k on k.account_id = a.id, public.email_outbox o
           where a.id = $1::uuid and k.key = $2 and o.id = $3::uuid`,
          [row.account_id, key, row.outbox_id],
        );
        expect(stored).toEqual({ email: HOSTILE_EMAIL, display_name: at === 0 ? value : HOSTILE[0], owner: HOSTILE_EMAIL, subject: value, text_body: value, html_body: value });
      }
    });
    expect(changed.sort()).toEqual(["public.accounts", "public.email_outbox", "public.events", "public.license_keys"]);
  });

  it("enqueueHookEmails and the outbox's failure record store them exactly, and nothing else", async () => {
    const changed = await changedBy(async () => {
      for (const value of HOSTILE) {
        const [id] = await enqueueHookEmails(db, { event: `hook ${value}`, messages: [{ to: HOSTILE_EMAIL, subject: value, text: value, html: value }], nowMs: Date.now() });
        expect(await enqueueHookEmails(db, { event: `hook ${value}`, messages: [{ to: OWNER, subject: "again", text: "", html: "" }], nowMs: Date.now() })).toEqual([]);
        const failing = { send: () => Promise.reject(new Error(value)) };
        expect(await deliverEmail({ db, mailer: failing, now: Date.now, log: memoryLogger().log }, id)).toBe("failed");
        const [row] = await db.query<{ recipient: string; subject: string; text_body: string; html_body: string; last_error: string }>(
          "select recipient, subject, text_body, html_body, last_error from public.email_outbox where id = $1::uuid",
          [id],
        );
        expect(row).toEqual({ recipient: HOSTILE_EMAIL, subject: value, text_body: value, html_body: value, last_error: value });
      }
    });
    expect(changed.sort()).toEqual(["public.email_outbox", "public.webhook_nonces"]);
  });

  it("the Auth link records store the error exactly; a value that is no uuid is refused as a bad value", async () => {
    const { id } = await newAccount();
    const changed = await changedBy(async () => {
      for (const value of HOSTILE) {
        await markAuthLinkFailed(db, id, value, Date.now());
        const [row] = await db.query<{ auth_link_error: string }>("select auth_link_error from public.accounts where id = $1::uuid", [id]);
        expect(row.auth_link_error).toBe(value);
        await expect(claimAccountsDueForAuth(db, { nowMs: Date.now(), leaseSeconds: 1, limit: 1, id: value })).rejects.toMatchObject({ code: "22P02" });
        await expect(linkAuthUser(db, value, value, value)).rejects.toMatchObject({ code: "22P02" });
      }
    });
    expect(changed).toEqual(["public.accounts"]);
  });

  it("refuses a NUL as a bad value (SQLSTATE 22021), never as an outage, and writes nothing", async () => {
    const { id, key, email } = await newAccount();
    const changed = await changedBy(async () => {
      const refusals = [
        () => validateAndNameLicenses(db, [{ key, email, systemName: NUL }]),
        () => validateLicenses(db, [{ key: NUL, email }]),
        () => setSystemNames(db, [{ key, name: NUL }]),
        () => readSchedulesIfChanged(db, [{ key: NUL, version: null }]),
        () => readLegacySchedulesIfChanged(db, [{ key, email: NUL, version: null }]),
        () => readEntitlements(db, [{ key, email: NUL }]),
        () => recordSightings(db, [[NUL, firstSighting(Date.now(), null)]], POLL_GAP_MS),
        () => recordNonce(db, NUL, Date.now()),
        () => onboard(db, { email: HOSTILE_EMAIL, name: NUL, key: "NULL-0000-0000-0000", message: { to: email, subject: "s", text: "t", html: "h" }, nowMs: Date.now() }),
        () => enqueueHookEmails(db, { event: NUL, messages: [{ to: email, subject: "s", text: "t", html: "h" }], nowMs: Date.now() }),
        () => markAuthLinkFailed(db, id, NUL, Date.now()),
      ];
      for (const refusal of refusals) {
        const error = await refusal().then(() => undefined, (reason: unknown) => reason);
        expect(error).toMatchObject({ code: "22021" });
        expect(isUnavailable(error)).toBe(false);
      }
    });
    expect(changed).toEqual([]);
  });
});
