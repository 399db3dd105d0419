import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { testApp } from "../support/app.ts";
import { freshDatabase, type TestDatabase } from "../support/database.ts";

/** A lone low surrogate after "é": JSON carries it as the escape `\udc00` (JSON.stringify writes it so). */
const LONE = "Caf\u00e9\udc00";
/** What it becomes on the way in: the surrogate replaced by U+FFFD, which no system name holds. */
const STORED = "Caf\u00e9\ufffd";
const json = { "content-type": "application/json" };

const databases: Array<{ name: string; open(): Promise<{ db: Database; close(): Promise<void> }> }> = [
  {
    name: "Postgres",
    async open() {
      // A minute for a connection and a statement: the subject is the text, not the 2 s a request may
      // wait, which a new connection for a fixture outlasted beside two CPU-bound processes (run 4).
      const database: TestDatabase = await freshDatabase({ max: 2, deadlineMs: 60_000 });
      return { db: database.db, close: () => database.drop() };
    },
  },
];

for (const { name, open } of databases) {
  describe(`text that is not well-formed Unicode, on ${name}`, () => {
    let db: Database;
    let close: () => Promise<void>;
    let request: ReturnType<typeof testApp>["request"];
    let serial = 0;

    beforeAll(async () => {
      ({ db, close } = await open());
      ({ request } = testApp(db));
    });
    afterAll(() => close());

    /** A new account with one active key, so each test owns its system name. */
    async function newKey() {
      serial += 1;
      const email = `wellformed${serial}@example.com`;
      const key = `WELL-${String(serial).padStart(4, "0")}-0000-0000`;
      const [{ id }] = await db.query<{ id: string }>("insert into public.accounts (email, display_name) values ($1, 'Test') returning id::text", [email]);
      await db.query("insert into public.license_keys (key, account_id, email) values ($1, $2::uuid, $3)", [key, id, email]);
      return { key, email };
    }

    async function storedName(key: string) {
      const [row] = await db.query<{ system_name: string | null }>("select system_name from public.license_keys where key = $1", [key]);
      return row.system_name;
    }

    async function send(method: string, path: string, body: unknown) {
      const response = await request(path, { method, headers: json, body: JSON.stringify(body) });
      return { status: response.status, body: await response.json() };
    }

    describe("PUT /api/v2/licenses/{licenseKey}/system-name", () => {
      it("refuses a name holding a lone surrogate (it arrives as U+FFFD) with invalid_name, whatever its length, and keeps the stored name", async () => {
        const { key } = await newKey();
        expect(await send("PUT", `/api/v2/licenses/${key}/system-name`, { systemName: "Café" })).toMatchObject({ status: 200 });
        for (const name of [LONE, `${"x".repeat(39)}\udc00`, STORED]) {
          expect(await send("PUT", `/api/v2/licenses/${key}/system-name`, { systemName: name })).toEqual({ status: 400, body: { message: "invalid_name" } });
        }
        expect(await storedName(key)).toBe("Café");
      });
    });

    describe("POST /api/v2/license", () => {
      it("validates a key whose systemName holds a lone surrogate, answering systemNameStatus invalid and storing nothing", async () => {
        const { key, email } = await newKey();
        expect(await send("POST", "/api/v2/license", { license_key: key, email_address: email, systemName: LONE })).toEqual({
          status: 200,
          body: { key, email_address: email, systemNameStatus: "invalid" },
        });
        expect(await storedName(key)).toBeNull();
      });

      it("answers a key or an e-mail holding a lone surrogate with the spec's 400, never a 500", async () => {
        const { key, email } = await newKey();
        expect(await send("POST", "/api/v2/license", { license_key: `${key}\udc00`, email_address: email })).toEqual({
          status: 400,
          body: { message: "license key not found" },
        });
        expect(await send("POST", "/api/v2/license", { license_key: key, email_address: `\udc00${email}` })).toEqual({
          status: 400,
          body: { message: "user does not exist" },
        });
      });
    });
  });
}
