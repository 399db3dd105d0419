import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { freshDatabase, type TestDatabase } from "../support/database.ts";

let database: TestDatabase;
let db: Database;

beforeAll(async () => {
  database = await freshDatabase();
  db = database.db;
});
afterAll(() => database.drop());

let serial = 0;

/** A new account with an e-mail of its own. */
async function newAccount() {
  serial += 1;
  const email = `holder${serial}@example.com`;
  const [{ id }] = await db.query<{ id: string }>("insert into public.accounts (email, display_name) values ($1, 'Test') returning id", [email]);
  return { id, email };
}

/** A new key, linked to an account or (accountId null) only carrying a stored e-mail. */
async function newKey(accountId: string | null, email: string) {
  serial += 1;
  const key = `KA${String(serial).padStart(2, "0")}-0000-0000-0000`;
  await db.query("insert into public.license_keys (key, account_id, email) values ($1, $2, $3)", [key, accountId, email]);
  return key;
}

/** The account the key belongs to, as stored. */
async function belongsTo(key: string) {
  const [row] = await db.query<{ belongs_to: string | null }>("select belongs_to from public.license_keys where key = $1", [key]);
  return row.belongs_to;
}

/** A session of its own, for a transaction held open. */
async function session() {
  const client = new pg.Client(database.url);
  await client.connect();
  const [{ pid }] = (await client.query<{ pid: number }>("select pg_backend_pid() as pid")).rows;
  return { client, pid };
}

/** Resolves once the backend waits for a lock. */
const waitingForLock = (pid: number) =>
  expect.poll(async () => (await db.query("select from pg_stat_activity where pid = $1 and wait_event_type = 'Lock'", [pid])).length).toBe(1);

describe("the account a key belongs to (license_keys.belongs_to)", () => {
  it("is the owner link of a linked key, whatever its stored e-mail", async () => {
    const owner = await newAccount();
    const other = await newAccount();
    expect(await belongsTo(await newKey(owner.id, other.email))).toBe(owner.id);
  });

  it("is the account of the stored e-mail, regardless of case, for a key with no owner link", async () => {
    const owner = await newAccount();
    expect(await belongsTo(await newKey(null, owner.email.toUpperCase()))).toBe(owner.id);
  });

  it("is none for a key whose e-mail matches no account", async () => {
    expect(await belongsTo(await newKey(null, "nobody-here@example.com"))).toBeNull();
  });

  it("follows a key linked later, and unlinked again", async () => {
    const byEmail = await newAccount();
    const linked = await newAccount();
    const key = await newKey(null, byEmail.email);
    await db.query("update public.license_keys set account_id = $2 where key = $1", [key, linked.id]);
    expect(await belongsTo(key)).toBe(linked.id);
    await db.query("update public.license_keys set account_id = null where key = $1", [key]);
    expect(await belongsTo(key)).toBe(byEmail.id);
  });

  it("follows a key's stored e-mail changed", async () => {
    const first = await newAccount();
    const second = await newAccount();
    const key = await newKey(null, first.email);
    await db.query("update public.license_keys set email = $2 where key = $1", [key, second.email]);
    expect(await belongsTo(key)).toBe(second.id);
  });

  it("follows an account created after its unlinked keys", async () => {
    const key = await newKey(null, "later@example.com");
    const [{ id }] = await db.query<{ id: string }>("insert into public.accounts (email, display_name) values ('Later@Example.com', 'Later') returning id");
    expect(await belongsTo(key)).toBe(id);
  });

  it("follows an account's e-mail changed: keys of the old e-mail leave it, keys of the new one join it, linked keys stay", async () => {
    const account = await newAccount();
    const linked = await newKey(account.id, account.email);
    const oldEmail = await newKey(null, account.email);
    const newEmail = await newKey(null, "moved-here@example.com");
    await db.query("update public.accounts set email = 'Moved-Here@example.com' where id = $1", [account.id]);
    expect([await belongsTo(linked), await belongsTo(oldEmail), await belongsTo(newEmail)]).toEqual([account.id, null, account.id]);
  });

  it("is none again when its e-mail's account is deleted", async () => {
    const account = await newAccount();
    const key = await newKey(null, account.email);
    await db.query("delete from public.accounts where id = $1", [account.id]);
    expect(await belongsTo(key)).toBeNull();
  });

  it("is the database's to keep: a write of it by hand is recomputed", async () => {
    const account = await newAccount();
    const other = await newAccount();
    const key = await newKey(null, account.email);
    await db.query("update public.license_keys set belongs_to = $2 where key = $1", [key, other.id]);
    expect(await belongsTo(key)).toBe(account.id);
  });

  it("is kept by bulk loads that turn the other triggers off (session_replication_role = replica)", async () => {
    const account = await newAccount();
    await db.script(`
      set local session_replication_role = replica;
      insert into public.license_keys (key, email) values ('KARE-0000-0000-0001', '${account.email}');`);
    expect(await belongsTo("KARE-0000-0000-0001")).toBe(account.id);
  });

  it("refuses an account's e-mail change that would give it two keys of one name, naming the unique index", async () => {
    const account = await newAccount();
    await db.query("update public.license_keys set system_name = 'Porch' where key = $1", [await newKey(account.id, account.email)]);
    await db.query("update public.license_keys set system_name = 'PORCH' where key = $1", [await newKey(null, "porch@example.com")]);
    await expect(db.query("update public.accounts set email = 'porch@example.com' where id = $1", [account.id]))
      .rejects.toThrow(/system_name_is_unique_per_account/);
  });

  it("is found for a key written while an account with its e-mail is being created, and the reverse", async () => {
    const { client: accountSession, pid: accountPid } = await session();
    const { client: keySession, pid: keyPid } = await session();
    try {
      // The account first, uncommitted: the key waits, then reads it.
      await accountSession.query("begin");
      const { rows: [{ id: first }] } = await accountSession.query("insert into public.accounts (email, display_name) values ('race-a@example.com', 'A') returning id");
      const keyWrite = keySession.query("insert into public.license_keys (key, email) values ('KARA-0000-0000-0001', 'race-a@example.com')");
      await waitingForLock(keyPid);
      await accountSession.query("commit");
      await keyWrite;
      expect(await belongsTo("KARA-0000-0000-0001")).toBe(first);

      // The key first, uncommitted: the account waits, then finds it.
      await keySession.query("begin");
      await keySession.query("insert into public.license_keys (key, email) values ('KARA-0000-0000-0002', 'race-b@example.com')");
      const accountWrite = accountSession.query("insert into public.accounts (email, display_name) values ('race-b@example.com', 'B') returning id");
      await waitingForLock(accountPid);
      await keySession.query("commit");
      const { rows: [{ id: second }] } = await accountWrite;
      expect(await belongsTo("KARA-0000-0000-0002")).toBe(second);
    } finally {
      await Promise.all([accountSession.end(), keySession.end()]);
    }
  });
});
