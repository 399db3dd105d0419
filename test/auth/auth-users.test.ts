import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { CHANGE_EMAIL } from "../../functions/app/automations/calls.ts";
import { authUsersFromConfig } from "../../functions/app/auth-users/auth-users-from-config.ts";
import type { AuthUsers } from "../../functions/app/auth-users/auth-users.ts";
import { ensureAuthUser, linkPendingAccounts } from "../../functions/app/auth-users/link-auth-user.ts";
import { supabaseAuthUsers } from "../../functions/app/auth-users/supabase-auth-users.ts";
import { parseConfig } from "../../functions/app/config.ts";
import type { Database } from "../../functions/app/db/database.ts";
import { runScheduledPass } from "../../functions/app/scheduled-pass.ts";
import { memoryLogger, testApp, unlimitedLimiter } from "../support/app.ts";
import { testClock } from "../support/clock.ts";
import { scopedDatabase } from "../support/database.ts";
import { startGotrueStub } from "../support/gotrue-stub.ts";
import { freePort } from "../support/postgres-server.ts";
import { memoryMailer } from "../support/mailer.ts";
import { ONBOARDING_PATH, SECRET, signedInit } from "../support/onboarding.ts";
import { startServer } from "../support/server.ts";

const SERVICE_ROLE_KEY = "service-role-key-for-tests-0123456789";

const database = scopedDatabase();
let db: Database;
let gotrue: Awaited<ReturnType<typeof startGotrueStub>>;
let authUsers: AuthUsers;

beforeAll(async () => {
  db = database.db;
  gotrue = await startGotrueStub(SERVICE_ROLE_KEY);
  authUsers = supabaseAuthUsers({ url: gotrue.url, serviceRoleKey: SERVICE_ROLE_KEY });
});
afterAll(async () => {
  await gotrue.stop();
});
beforeEach(() => {
  gotrue.calls.length = 0;
});

let counter = 0;
const newEmail = (prefix = "auth") => `${prefix}${++counter}@example.com`;


/** An account inserted directly, as staff or an earlier onboarding would leave it. */
async function newAccount(email = newEmail("direct")): Promise<{ id: string; email: string }> {
  const [row] = await db.query<{ id: string }>(
    "insert into public.accounts (email, display_name) values ($1, 'Direct Name') returning id::text",
    [email],
  );
  return { id: row.id, email };
}

const accountOf = async (id: string, on = db) =>
  (await on.query<
    { auth_user_id: string | null; auth_link_attempts: number; auth_link_error: string | null; auth_link_due_at: Date | null }
  >(
    "select auth_user_id::text, auth_link_attempts, auth_link_error, auth_link_due_at from public.accounts where id = $1",
    [id],
  ))[0];

const creates = () => gotrue.calls.filter((call) => call.method === "POST" && call.path === "/auth/v1/admin/users");

/** A day after the test clock's start: every account left by the seed or earlier tests is due by then. */
const later = () => testClock().now() + 24 * 60 * 60_000;
/** Links every account of the seed and earlier tests, so each test sees only its own. */
const linkAll = () => linkPendingAccounts({ db, log: memoryLogger().log, now: later, authUsers }, { max: 1000 });

describe("Supabase Auth's admin API, against a local stub of its HTTP boundary", () => {
  it("creates the user with the account's id, its e-mail confirmed and its name, with the service role key as apikey and bearer", async () => {
    const id = crypto.randomUUID();
    const email = newEmail("create");
    expect(await authUsers.ensure({ id, email, name: "Ada Lovelace" })).toBe(id);
    const [call] = gotrue.calls;
    expect(call).toMatchObject({ method: "POST", path: "/auth/v1/admin/users", status: 200 });
    expect(call.headers.apikey).toBe(SERVICE_ROLE_KEY);
    expect(call.headers.authorization).toBe(`Bearer ${SERVICE_ROLE_KEY}`);
    expect(call.body).toEqual({
      id,
      email,
      email_confirm: true,
      user_metadata: { name: "Ada Lovelace" },
      app_metadata: { cadence_account_id: id },
    });
    expect(gotrue.users.get(id)).toMatchObject({ email, user_metadata: { name: "Ada Lovelace" } });
    expect(gotrue.users.get(id)?.email_confirmed_at).not.toBeNull();
  });

  it("answers the existing user when Auth says the user already exists (a retry, or a parallel onboarding first)", async () => {
    const id = crypto.randomUUID();
    const email = newEmail("again");
    await authUsers.ensure({ id, email, name: "Once" });
    gotrue.calls.length = 0;
    expect(await authUsers.ensure({ id, email: email.toUpperCase(), name: "Once" })).toBe(id);
    expect(gotrue.calls.map((call) => [call.method, call.path, call.status])).toEqual([
      ["POST", "/auth/v1/admin/users", 422],
      ["GET", `/auth/v1/admin/users/${id}`, 200],
    ]);
    expect([...gotrue.users.values()].filter((user) => user.email === email)).toHaveLength(1);
  });

  it("refuses to adopt an Auth user Cadence did not create that holds the e-mail", async () => {
    const email = newEmail("foreign");
    gotrue.addUser({ id: crypto.randomUUID(), email });
    await expect(authUsers.ensure({ id: crypto.randomUUID(), email, name: "Someone" })).rejects.toThrow(
      /belongs to an Auth user Cadence did not create/,
    );
  });

  it("fails, naming Auth's status, when Auth is unavailable or refuses the key", async () => {
    gotrue.failWith(503);
    await expect(authUsers.ensure({ id: crypto.randomUUID(), email: newEmail("down"), name: "Down" })).rejects.toThrow(/503/);
    const wrongKey = supabaseAuthUsers({ url: gotrue.url, serviceRoleKey: "not-the-key" });
    await expect(wrongKey.ensure({ id: crypto.randomUUID(), email: newEmail("key"), name: "Key" })).rejects.toThrow(
      /401 no_authorization/,
    );
  });

  it("gives an existing user another e-mail, confirmed, with the service role key", async () => {
    const id = crypto.randomUUID();
    await authUsers.ensure({ id, email: newEmail("before"), name: "Moves" });
    const email = newEmail("after");
    gotrue.calls.length = 0;
    await authUsers.changeEmail(id, email);
    expect(gotrue.calls).toEqual([expect.objectContaining({ method: "PUT", path: `/auth/v1/admin/users/${id}`, status: 200, body: { email, email_confirm: true } })]);
    expect(gotrue.calls[0].headers.authorization).toBe(`Bearer ${SERVICE_ROLE_KEY}`);
    expect(gotrue.users.get(id)?.email).toBe(email);
  });

  it("fails to give a user an e-mail another Auth user has, naming Auth's answer", async () => {
    const id = crypto.randomUUID();
    await authUsers.ensure({ id, email: newEmail("mine"), name: "Mine" });
    const taken = newEmail("taken");
    gotrue.addUser({ id: crypto.randomUUID(), email: taken });
    await expect(authUsers.changeEmail(id, taken)).rejects.toThrow(/auth admin updateUserById failed \(422 email_exists\)/);
  });

  it("fails when Auth cannot be reached at all", async () => {
    const nowhere = supabaseAuthUsers({ url: `http://127.0.0.1:${await freePort()}`, serviceRoleKey: SERVICE_ROLE_KEY });
    // supabase-js prints the refused fetch itself; kept out of the test output, where it read as a failure.
    const printed = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      await expect(nowhere.ensure({ id: crypto.randomUUID(), email: newEmail("nowhere"), name: "Nowhere" })).rejects.toThrow(
        /auth admin createUser failed/,
      );
    } finally {
      printed.mockRestore();
    }
  });
});

describe("POST /api/v2/automations/create/account on Supabase: the account's Auth user", () => {
  const clock = testClock();
  const onSupabase = (overrides = {}) =>
    testApp(db, {
      now: clock.now,
      signingSecret: SECRET,
      mailer: memoryMailer().mailer,
      limiter: unlimitedLimiter,
      authUsers,
      ...overrides,
    });
  const onboard = async (request: ReturnType<typeof testApp>["request"], email: string) =>
    request(ONBOARDING_PATH, await signedInit({ email, name: "Grace Hopper" }, { nowMs: clock.now() }));

  it("makes the new account an Auth user with the account's id, and links them", async () => {
    const email = newEmail("onboarded");
    const response = await onboard(onSupabase().request, email);
    expect(response.status).toBe(200);
    const { user_id } = await response.json();
    expect(await accountOf(user_id)).toMatchObject({ auth_user_id: user_id, auth_link_error: null, auth_link_due_at: null });
    expect(gotrue.users.get(user_id)).toMatchObject({ email, user_metadata: { name: "Grace Hopper" } });
  });

  it("ends with one account and one Auth user, linked, after ten simultaneous onboardings of one new e-mail", async () => {
    const email = newEmail("together");
    const { request } = onSupabase();
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => onboard(request, i % 2 ? email : email.toUpperCase())),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(10).fill(200));
    const ids = new Set(await Promise.all(responses.map(async (response) => (await response.json()).user_id)));
    expect(ids.size).toBe(1);
    const [accountId] = ids;
    expect(creates().filter((call) => call.status === 200)).toHaveLength(1);
    expect([...gotrue.users.values()].filter((user) => user.email === email)).toEqual([
      expect.objectContaining({ id: accountId }),
    ]);
    expect((await accountOf(accountId)).auth_user_id).toBe(accountId);
  });

  it("leaves an account already linked alone when it is onboarded again", async () => {
    const email = newEmail("twice");
    const { request } = onSupabase();
    await onboard(request, email);
    gotrue.calls.length = 0;
    expect((await onboard(request, email)).status).toBe(200);
    expect(gotrue.calls).toEqual([]);
  });

  it("answers 200 when Auth is down, leaving the account unlinked with its error and next try, never the e-mail in the log", async () => {
    const log = memoryLogger();
    const email = newEmail("outage");
    gotrue.failWith(503);
    const response = await onboard(onSupabase({ log: log.log }).request, email);
    expect(response.status).toBe(200);
    const { user_id } = await response.json();
    expect(await accountOf(user_id)).toMatchObject({
      auth_user_id: null,
      auth_link_attempts: 1,
      auth_link_error: expect.stringMatching(/503/),
      auth_link_due_at: new Date(clock.now() + 60_000),
    });
    const logged = log.lines.join("\n");
    expect(logged).toContain("auth_user_link_failed");
    for (const secret of [email, SERVICE_ROLE_KEY]) expect(logged).not.toContain(secret);
  });

  it("creates no Auth user when Cadence runs without Supabase Auth", async () => {
    const response = await onboard(onSupabase({ authUsers: undefined }).request, newEmail("local"));
    const { user_id } = await response.json();
    expect(gotrue.calls).toEqual([]);
    expect(await accountOf(user_id)).toMatchObject({ auth_user_id: null, auth_link_attempts: 0 });
  });
});

describe("the outbox pass: accounts still without an Auth user", () => {
  it("links each due account, retries a failure after the backoff, and nothing is lost", async () => {
    await linkAll();
    const clock = testClock();
    const ports = { db, mailer: memoryMailer().mailer, now: clock.now, log: memoryLogger().log, authUsers };
    const account = await newAccount();
    gotrue.failWith(503);
    expect((await runScheduledPass(ports)).authUsers).toEqual({ linked: 0, failed: 1 });
    expect(await accountOf(account.id)).toMatchObject({ auth_user_id: null, auth_link_attempts: 1 });

    clock.advance(59_000);
    expect((await runScheduledPass(ports)).authUsers).toEqual({ linked: 0, failed: 0 });
    clock.advance(1_000);
    expect((await runScheduledPass(ports)).authUsers).toEqual({ linked: 1, failed: 0 });
    expect(await accountOf(account.id)).toMatchObject({ auth_user_id: account.id, auth_link_attempts: 2, auth_link_error: null });
    expect(gotrue.users.get(account.id)).toMatchObject({ email: account.email, user_metadata: { name: "Direct Name" } });
  });

  it("doubles the wait after each failure", async () => {
    await linkAll();
    const clock = testClock();
    const ports = { db, log: memoryLogger().log, now: clock.now, authUsers };
    const account = await newAccount();
    gotrue.failWith(503, 2);
    await linkPendingAccounts(ports);
    clock.advance(60_000);
    await linkPendingAccounts(ports);
    expect((await accountOf(account.id)).auth_link_due_at).toEqual(new Date(clock.now() + 120_000));
  });

  it("records, and never links, an e-mail held by an Auth user Cadence did not create", async () => {
    await linkAll();
    const account = await newAccount();
    const foreign = crypto.randomUUID();
    gotrue.addUser({ id: foreign, email: account.email });
    expect(await linkAll()).toEqual({ linked: 0, failed: 1 });
    expect(await accountOf(account.id)).toMatchObject({
      auth_user_id: null,
      auth_link_error: expect.stringMatching(/did not create/),
    });
  });

  it("links a claimed account in one worker only: a second claim of it finds nothing due", async () => {
    await linkAll();
    const account = await newAccount();
    const clock = testClock();
    let entered = () => {};
    const claimed = new Promise<void>((resolve) => (entered = resolve));
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow: AuthUsers = {
      async ensure(input) {
        entered();
        await gate;
        return authUsers.ensure(input);
      },
      changeEmail: authUsers.changeEmail,
    };
    const first = ensureAuthUser({ db, log: memoryLogger().log, now: clock.now, authUsers: slow }, account.id);
    await claimed;
    expect(await ensureAuthUser({ db, log: memoryLogger().log, now: clock.now, authUsers }, account.id)).toBe("not_due");
    release();
    expect(await first).toBe("linked");
    expect(creates()).toHaveLength(1);
  });

  it("reports nothing about Auth users without Supabase Auth, and leaves them unlinked", async () => {
    const account = await newAccount();
    expect(await runScheduledPass({ db, mailer: memoryMailer().mailer, now: testClock().now, log: memoryLogger().log })).not
      .toHaveProperty(
        "authUsers",
      );
    expect((await accountOf(account.id)).auth_user_id).toBeNull();
  });

  it("refuses a second account linked to an Auth user already taken", async () => {
    const first = await newAccount();
    const second = await newAccount();
    await db.query("update public.accounts set auth_user_id = $1 where id = $1", [first.id]);
    await expect(db.query("update public.accounts set auth_user_id = $1 where id = $2", [first.id, second.id])).rejects.toThrow(
      /account_auth_user_is_unique/,
    );
  });
});

describe("the outbox pass: accounts whose e-mail changed after their Auth user was made", () => {
  /** An account linked to its Auth user, as onboarding on Supabase leaves it. */
  async function linkedAccount() {
    const account = await newAccount();
    expect(await ensureAuthUser({ db, log: memoryLogger().log, now: testClock().now, authUsers }, account.id)).toBe("linked");
    return account;
  }
  const changeEmail = (id: string, email: string) => db.query("update public.accounts set email = $2 where id = $1", [id, email]);

  it("gives the Auth user the e-mail staff set on the account, so the old address signs in no more", async () => {
    await linkAll();
    const account = await linkedAccount();
    const email = newEmail("renamed");
    await changeEmail(account.id, email);
    expect(await linkAll()).toEqual({ linked: 1, failed: 0 });
    expect(gotrue.users.get(account.id)).toMatchObject({ email, email_confirmed_at: expect.any(String) });
    expect([...gotrue.users.values()].filter((user) => user.email === account.email)).toEqual([]);
    expect(await accountOf(account.id)).toMatchObject({ auth_user_id: account.id, auth_link_error: null, auth_link_due_at: null });
    expect(await linkAll()).toEqual({ linked: 0, failed: 0 });
  });

  it("keeps the link and retries with backoff when Auth refuses the new e-mail (another Auth user has it)", async () => {
    await linkAll();
    const account = await linkedAccount();
    const email = newEmail("held");
    const holder = crypto.randomUUID();
    gotrue.addUser({ id: holder, email });
    await changeEmail(account.id, email);
    const clock = testClock();
    const ports = { db, log: memoryLogger().log, now: clock.now, authUsers };
    expect(await linkPendingAccounts(ports)).toEqual({ linked: 0, failed: 1 });
    // Its second try in all (the first linked it): due again after the backoff's second step.
    expect(await accountOf(account.id)).toMatchObject({
      auth_user_id: account.id,
      auth_link_error: expect.stringMatching(/email_exists/),
      auth_link_due_at: new Date(clock.now() + 120_000),
    });
    expect(gotrue.users.get(account.id)?.email).toBe(account.email);
    gotrue.users.delete(holder);
    clock.advance(120_000);
    expect(await linkPendingAccounts(ports)).toEqual({ linked: 1, failed: 0 });
    expect(gotrue.users.get(account.id)?.email).toBe(email);
  });

  it("gives the Auth user the e-mail of POST /api/v2/automations/change/email right after the answer", async () => {
    await linkAll();
    const account = await linkedAccount();
    const clock = testClock();
    const { request } = testApp(db, { now: clock.now, signingSecret: SECRET, mailer: memoryMailer().mailer, limiter: unlimitedLimiter, authUsers });
    const email = newEmail("platform");
    const path = CHANGE_EMAIL.path;
    const response = await request(path, await signedInit({ type: CHANGE_EMAIL.name, account_email: account.email, new_email: email }, { nowMs: clock.now(), path }));
    expect(response.status).toBe(200);
    expect(gotrue.users.get(account.id)?.email).toBe(email);
    expect(await accountOf(account.id)).toMatchObject({ auth_user_id: account.id, auth_link_due_at: null });
  });
});

describe("configuration of Supabase Auth", () => {
  it("uses Auth only with both SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY, and refuses one without the other", () => {
    expect(authUsersFromConfig(parseConfig({}))).toBeUndefined();
    expect(authUsersFromConfig(parseConfig({ SUPABASE_URL: gotrue.url, SUPABASE_SERVICE_ROLE_KEY: SERVICE_ROLE_KEY })))
      .toBeDefined();
    expect(() => parseConfig({ SUPABASE_URL: gotrue.url })).toThrow(
      /SUPABASE_SERVICE_ROLE_KEY: SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY go together/,
    );
    expect(() => parseConfig({ SUPABASE_SERVICE_ROLE_KEY: SERVICE_ROLE_KEY })).toThrow(/SUPABASE_URL: /);
  });
});

describe("the entry (functions/api/index.ts under Deno) and Supabase Auth", () => {
  const own = scopedDatabase();
  it("says once at start-up that it skips Auth users without SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY", async () => {
    const server = await startServer({ DATABASE_URL: own.url });
    try {
      expect(server.logs().match(/"event":"auth_users_skipped"/g)).toHaveLength(1);
    } finally {
      await server.stop();
    }
  });

  it("on Supabase, onboards a signed request into an account linked to its new Auth user", async () => {
    const server = await startServer({
      DATABASE_URL: own.url,
      SIGNING_SECRET: SECRET,
      SUPABASE_URL: gotrue.url,
      SUPABASE_SERVICE_ROLE_KEY: SERVICE_ROLE_KEY,
    });
    try {
      expect(server.logs()).not.toContain("auth_users_skipped");
      const email = newEmail("deno");
      const response = await fetch(`${server.url}${ONBOARDING_PATH}`, await signedInit({ email }, { nowMs: Date.now() }));
      expect(response.status).toBe(200);
      const { user_id } = await response.json();
      // The entry's start-up sweep (runtime.ts) links every due account too, while it already
      // answers: it may claim this one first, and the route then leaves the link to it.
      await expect.poll(async () => (await accountOf(user_id, own.db)).auth_user_id).toBe(user_id);
      expect(gotrue.users.get(user_id)?.email).toBe(email);
      expect(server.logs()).not.toContain(SERVICE_ROLE_KEY);
    } finally {
      await server.stop();
    }
  });
});
