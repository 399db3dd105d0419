import { execFile } from "node:child_process";
import { promisify } from "node:util";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHANGE_EMAIL, LIFECYCLE_CALLS, MOVE, REINSTATE, RESEND, SUSPEND } from "../../functions/app/automations/calls.ts";
import type { Database } from "../../functions/app/db/database.ts";
import { signOnboardingRequest, signStandardWebhookRequest } from "../../functions/app/signatures/signed-request.ts";
import { createLimiter, type LimiterStore } from "../../functions/app/rate-limit/create-limiter.ts";
import { RULES } from "../../functions/app/rate-limit/rules.ts";
import { openPlainRedis, type PlainRedis } from "../../functions/app/rate-limit/plain-redis.ts";
import { downLimiter, memoryLogger, testApp } from "../support/app.ts";
import { childEnv } from "../support/child-env.ts";
import { testClock } from "../support/clock.ts";
import { describeDirectOnly, scopedDatabase } from "../support/database.ts";
import { memoryMailer } from "../support/mailer.ts";
import { FULL_KEY_IN_TEXT, ONBOARDING_PATH, SECRET, WEBHOOK_SECRET } from "../support/onboarding.ts";
import { PATIENT } from "../support/patient-store.ts";
import { type RedisServer, redisServerAvailable, startRedis } from "../support/redis.ts";
import { startUpstashStub, type UpstashStub } from "../support/upstash-stub.ts";

// The signed lifecycle calls (functions/app/automations/): each signed and retried as onboarding
// is, each one SQL change (supabase/schemas/13_onboarding_lifecycle.sql), and what a kiosk, an
// integrator and an account holder see after it.

const INVALID = '{"error":"invalid signature"}';
const PREVIOUS_SECRET = "previous-signing-secret-0123456789";

const database = scopedDatabase();
let db: Database;
const clock = testClock();
const mail = memoryMailer();
let request: ReturnType<typeof testApp>["request"];
let logLines: string[];

beforeAll(() => {
  db = database.db;
  logLines = [];
  ({ request } = testApp(db, {
    now: clock.now,
    signingSecret: SECRET,
    signingSecretPrevious: PREVIOUS_SECRET,
    standardWebhooksSecret: WEBHOOK_SECRET,
    mailer: mail.mailer,
    log: (level, event, fields = {}) => void logLines.push(JSON.stringify({ level, event, ...fields })),
  }));
});

let counter = 0;
/** An e-mail no other test uses. */
const newEmail = (prefix = "life") => `${prefix}${++counter}.${process.pid}@example.com`;
/** A key no other test uses. */
const newKeyText = () => `LIFE-${String(++counter).padStart(4, "0")}-${String(process.pid % 10000).padStart(4, "0")}-0001`;

/** An account with one active key of its own, written as onboarding writes them. */
async function accountWithKey(options: { systemName?: string } = {}) {
  const email = newEmail();
  const key = newKeyText();
  const [account] = await db.query<{ id: string }>("insert into public.accounts (email, display_name) values ($1, 'Life') returning id", [email]);
  await db.query("insert into public.license_keys (key, account_id, email, system_name) values ($1, $2, $3, $4)", [key, account.id, email, options.systemName ?? null]);
  return { email, key, accountId: account.id };
}

/** A call signed with the contract's scheme over its own path. */
async function signed(path: string, body: unknown, options: { nowMs?: number; nonce?: string; secret?: string; ip?: string; idempotencyKey?: string; signedPath?: string } = {}) {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const init = await signOnboardingRequest(options.secret ?? SECRET, text, { ...options, nowMs: options.nowMs ?? clock.now(), path: options.signedPath ?? path });
  const headers: Record<string, string> = { ...init.headers };
  if (options.ip) headers["x-forwarded-for"] = options.ip;
  return { method: "POST", headers, body: init.body };
}

/** A call signed with Standard Webhooks. */
function standard(body: unknown, options: { id?: string; nowMs?: number; secret?: string } = {}) {
  const signedRequest = signStandardWebhookRequest(options.secret ?? WEBHOOK_SECRET, JSON.stringify(body), { ...options, nowMs: options.nowMs ?? clock.now() });
  return { method: "POST", headers: signedRequest.headers, body: signedRequest.body };
}

const call = async (path: string, body: unknown, options: Parameters<typeof signed>[2] = {}) => request(path, await signed(path, body, options));

async function expectAnswer(response: Response, status: number, body: unknown) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/json");
  expect(await response.json()).toEqual(body);
}

const validate = (key: string, email: string) =>
  request("/api/v2/license", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ license_key: key, email_address: email }) });

const isActive = async (key: string) => (await db.query<{ active: boolean }>("select active from public.license_keys where key = $1", [key]))[0].active;

describe("POST /api/v2/automations/suspend/key", () => {
  it("suspends an active key: 200, and license validation then answers as for a key that is not active", async () => {
    const { key, email } = await accountWithKey();
    expect((await validate(key, email)).status).toBe(200);
    await expectAnswer(await call(SUSPEND.path, { type: SUSPEND.name, license_key: key }), 200, { success: true, message: "license key suspended", changed: true });
    await expectAnswer(await validate(key, email), 400, { message: "license key is not active" });
    // Exactly the answer of a key staff deactivated by hand (the seed's DEMO-0000-0000-0003).
    expect(await (await validate("DEMO-0000-0000-0003", "demo@example.com")).text()).toBe('{"message":"license key is not active"}');
  });

  it("leaves the schedule polls as they answer a key that is not active today: served as before", async () => {
    const key = "DEMO-0000-0000-0002";
    const license = `/api/v2/licenses/${key}/schedule`;
    const legacy = `/api/v2/schedule?email=demo@example.com&licenseKey=${key}`;
    const before = [await (await request(license)).text(), await (await request(legacy)).text()];
    expect((await call(SUSPEND.path, { type: SUSPEND.name, license_key: key })).status).toBe(200);
    const after = [await request(license), await request(legacy)];
    expect(after.map((response) => response.status)).toEqual([200, 200]);
    expect([await after[0].text(), await after[1].text()]).toEqual(before);
    expect((await call(REINSTATE.path, { type: REINSTATE.name, license_key: key })).status).toBe(200);
  });

  it("answers a suspended key 200 with changed false, changing nothing", async () => {
    const { key } = await accountWithKey();
    expect((await call(SUSPEND.path, { type: SUSPEND.name, license_key: key })).status).toBe(200);
    await expectAnswer(await call(SUSPEND.path, { type: SUSPEND.name, license_key: key }), 200, { success: true, message: "license key suspended", changed: false });
    expect(await isActive(key)).toBe(false);
  });

  it("answers an unknown key 404 unknown_license", async () => {
    await expectAnswer(await call(SUSPEND.path, { type: SUSPEND.name, license_key: "NONE-0000-0000-0000" }), 404, { message: "unknown_license" });
  });

  it("answers bad input 400 with a message, changing nothing", async () => {
    await expectAnswer(await call(SUSPEND.path, { type: SUSPEND.name }), 400, { message: "license_key is required" });
    await expectAnswer(await call(SUSPEND.path, { type: SUSPEND.name, license_key: "   " }), 400, { message: "license_key is required" });
    await expectAnswer(await call(SUSPEND.path, { type: SUSPEND.name, license_key: 42 }), 400, { message: "license_key is required" });
    for (const key of ["demo-0000-0000-0001", "DEMO00000000001", "DEMO-0000-0000-00012"]) {
      await expectAnswer(await call(SUSPEND.path, { type: SUSPEND.name, license_key: key }), 400, {
        message: "license_key must be a license key of the form XXXX-XXXX-XXXX-XXXX (A-Z, 0-9)",
      });
    }
    await expectAnswer(await call(SUSPEND.path, "{not json"), 400, { message: "invalid JSON body" });
    await expectAnswer(await call(SUSPEND.path, ""), 400, { message: "request body is required" });
    await expectAnswer(await call(SUSPEND.path, "[]"), 400, { message: "type is required" });
  });

  it("refuses a body without its call's `type` (400), before anything is carried out", async () => {
    const { key } = await accountWithKey();
    await expectAnswer(await call(SUSPEND.path, { license_key: key }), 400, { message: "type is required" });
    await expectAnswer(await call(SUSPEND.path, { type: 1, license_key: key }), 400, { message: "type is required" });
    await expectAnswer(await call(SUSPEND.path, { type: "SUSPEND", license_key: key }), 400, { message: "type must name the call of this path" });
    expect(await isActive(key)).toBe(true);
  });

  it("refuses a Standard Webhooks request signed for another call, sent here first, and the original is carried out where it was sent", async () => {
    const { key } = await accountWithKey();
    expect((await call(SUSPEND.path, { type: SUSPEND.name, license_key: key })).status).toBe(200);
    // A reinstatement intercepted on its way (Standard Webhooks signs no path) and sent to resend first.
    const intercepted = standard({ type: REINSTATE.name, license_key: key }, { id: `msg_${crypto.randomUUID()}` });
    await expectAnswer(await request(RESEND.path, intercepted), 400, { message: "type must name the call of this path" });
    await expectAnswer(await request(SUSPEND.path, intercepted), 400, { message: "type must name the call of this path" });
    expect(await isActive(key)).toBe(false);
    expect((await request(REINSTATE.path, intercepted)).status).toBe(200);
    expect(await isActive(key)).toBe(true);
  });

  it("answers a body over 64 KiB 413", async () => {
    const response = await call(SUSPEND.path, JSON.stringify({ type: SUSPEND.name, license_key: "NONE-0000-0000-0000", pad: "x".repeat(64 * 1024) }));
    await expectAnswer(response, 413, { message: "request body must not exceed 64 KiB" });
  });

  it("refuses every signature failure of the contract's scheme with the same 401: another secret, another path, a missing header", async () => {
    const { key } = await accountWithKey();
    for (const init of [
      await signed(SUSPEND.path, { type: SUSPEND.name, license_key: key }, { secret: "not-the-secret" }),
      // Signed for onboarding's path (or another call's): the path is part of what is signed.
      await signed(SUSPEND.path, { type: SUSPEND.name, license_key: key }, { signedPath: ONBOARDING_PATH }),
      await signed(SUSPEND.path, { type: SUSPEND.name, license_key: key }, { signedPath: REINSTATE.path }),
    ]) {
      const response = await request(SUSPEND.path, init);
      expect(response.status).toBe(401);
      expect(await response.text()).toBe(INVALID);
    }
    const unsignedInit = await signed(SUSPEND.path, { type: SUSPEND.name, license_key: key });
    delete (unsignedInit.headers as Record<string, string>)["x-signature"];
    expect(await (await request(SUSPEND.path, unsignedInit)).text()).toBe(INVALID);
    expect(await isActive(key)).toBe(true);
  });

  it("refuses every Standard Webhooks failure with the same 401: another secret, a changed body, both schemes at once", async () => {
    const { key } = await accountWithKey();
    const wrong = standard({ type: SUSPEND.name, license_key: key }, { secret: "whsec_bm90LXRoZS13ZWJob29rLXNlY3JldC0wMTIzNDU2" });
    const changed = { ...standard({ type: SUSPEND.name, license_key: key }), body: JSON.stringify({ type: SUSPEND.name, license_key: key, extra: 1 }) };
    const both = standard({ type: SUSPEND.name, license_key: key });
    Object.assign(both.headers, (await signed(SUSPEND.path, { type: SUSPEND.name, license_key: key })).headers);
    for (const init of [wrong, changed, both]) {
      const response = await request(SUSPEND.path, init);
      expect(response.status).toBe(401);
      expect(await response.text()).toBe(INVALID);
    }
    expect(await isActive(key)).toBe(true);
  });

  it("accepts a timestamp 300 seconds old or ahead and refuses 301, under both schemes", async () => {
    const { key } = await accountWithKey();
    for (const skew of [-300, 300]) expect((await call(SUSPEND.path, { type: SUSPEND.name, license_key: key }, { nowMs: clock.now() + skew * 1000 })).status).toBe(200);
    for (const skew of [-301, 301]) {
      expect((await call(SUSPEND.path, { type: SUSPEND.name, license_key: key }, { nowMs: clock.now() + skew * 1000 })).status).toBe(401);
      expect((await request(SUSPEND.path, standard({ type: SUSPEND.name, license_key: key }, { nowMs: clock.now() + skew * 1000 }))).status).toBe(401);
    }
    expect((await request(SUSPEND.path, standard({ type: SUSPEND.name, license_key: key }, { nowMs: clock.now() - 300_000 }))).status).toBe(200);
  });

  it("refuses a replayed nonce: the same signed request twice is 401 the second time", async () => {
    const { key } = await accountWithKey();
    const init = await signed(SUSPEND.path, { type: SUSPEND.name, license_key: key });
    expect((await request(SUSPEND.path, init)).status).toBe(200);
    expect(await (await request(SUSPEND.path, init)).text()).toBe(INVALID);
    // A nonce is spent across every signed call: used here, it is a replay at another.
    const reused = await signed(REINSTATE.path, { type: REINSTATE.name, license_key: key }, { nonce: (init.headers as Record<string, string>)["x-nonce"] });
    expect(await (await request(REINSTATE.path, reused)).text()).toBe(INVALID);
    expect(await isActive(key)).toBe(false);
  });

  it("accepts the previous secret during a rotation", async () => {
    const { key } = await accountWithKey();
    expect((await call(SUSPEND.path, { type: SUSPEND.name, license_key: key }, { secret: PREVIOUS_SECRET })).status).toBe(200);
    expect(await isActive(key)).toBe(false);
  });

  it("answers a retry with the same Idempotency-Key and body with the first answer, byte for byte, changing nothing again", async () => {
    const { key } = await accountWithKey();
    const id = crypto.randomUUID();
    const first = await call(SUSPEND.path, { type: SUSPEND.name, license_key: key }, { idempotencyKey: id });
    expect(first.status).toBe(200);
    const firstText = await first.text();
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    // Reinstated meanwhile: a retry of the suspension must not suspend it again.
    expect((await call(REINSTATE.path, { type: REINSTATE.name, license_key: key })).status).toBe(200);
    const retry = await call(SUSPEND.path, { type: SUSPEND.name, license_key: key }, { idempotencyKey: id });
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await retry.text()).toBe(firstText);
    expect(await isActive(key)).toBe(true);
  });

  it("answers a retry of a refused call with the same refusal", async () => {
    const id = crypto.randomUUID();
    await expectAnswer(await call(SUSPEND.path, { type: SUSPEND.name, license_key: "NONE-0000-0000-0001" }, { idempotencyKey: id }), 404, { message: "unknown_license" });
    const retry = await call(SUSPEND.path, { type: SUSPEND.name, license_key: "NONE-0000-0000-0001" }, { idempotencyKey: id });
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    await expectAnswer(retry, 404, { message: "unknown_license" });
  });

  it("refuses the same Idempotency-Key with another body, or at another call, with 422, changing nothing", async () => {
    const one = await accountWithKey();
    const two = await accountWithKey();
    const id = crypto.randomUUID();
    expect((await call(SUSPEND.path, { type: SUSPEND.name, license_key: one.key }, { idempotencyKey: id })).status).toBe(200);
    const reused = { message: "this idempotency key was already used with a different request body" };
    await expectAnswer(await call(SUSPEND.path, { type: SUSPEND.name, license_key: two.key }, { idempotencyKey: id }), 422, reused);
    await expectAnswer(await call(REINSTATE.path, { type: REINSTATE.name, license_key: one.key }, { idempotencyKey: id }), 422, reused);
    expect([await isActive(one.key), await isActive(two.key)]).toEqual([false, true]);
  });

  it("answers a repeated webhook-id with the first answer, and refuses it at another call (Standard Webhooks does not sign the path)", async () => {
    const { key } = await accountWithKey();
    const init = standard({ type: SUSPEND.name, license_key: key }, { id: `msg_${crypto.randomUUID()}` });
    const first = await request(SUSPEND.path, init);
    expect(first.status).toBe(200);
    const retry = await request(SUSPEND.path, init);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await retry.text()).toBe(await first.text());
    // The very same signed request sent to reinstate: carried out nowhere else.
    await expectAnswer(await request(REINSTATE.path, init), 400, { message: "type must name the call of this path" });
    expect(await isActive(key)).toBe(false);
  });

  it("limits every lifecycle call together to 60 a minute per client IP: the 61st is 429 with Retry-After", async () => {
    const ip = "203.0.113.61";
    for (let i = 0; i < 60; i++) expect((await call(SUSPEND.path, { type: SUSPEND.name, license_key: "NONE-0000-0000-0000" }, { ip })).status).toBe(404);
    const over = await call(REINSTATE.path, { type: REINSTATE.name, license_key: "NONE-0000-0000-0000" }, { ip });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await over.json()).toEqual({ message: "too many requests" });
    expect((await call(SUSPEND.path, { type: SUSPEND.name, license_key: "NONE-0000-0000-0000" }, { ip: "203.0.113.62" })).status).toBe(404);
  });

  it("fails closed while the limiter's store is down: 503 with Retry-After, nothing changed", async () => {
    const { key } = await accountWithKey();
    const { request: down } = testApp(db, { now: clock.now, signingSecret: SECRET, limiter: downLimiter, mailer: mail.mailer });
    const response = await down(SUSPEND.path, await signed(SUSPEND.path, { type: SUSPEND.name, license_key: key }));
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).not.toBeNull();
    expect(await isActive(key)).toBe(true);
  });

  it("logs the call with the key masked, never the key, an e-mail or the body", async () => {
    const { key, email } = await accountWithKey();
    logLines.length = 0;
    expect((await call(SUSPEND.path, { type: SUSPEND.name, license_key: key })).status).toBe(200);
    expect(logLines.some((line) => line.includes('"event":"license_lifecycle"') && line.includes('"call":"suspend"'))).toBe(true);
    for (const line of logLines) {
      expect(line).not.toMatch(FULL_KEY_IN_TEXT);
      expect(line).not.toContain(email);
    }
  });
});

describe("POST /api/v2/automations/reinstate/key", () => {
  it("reinstates a suspended key: it validates again", async () => {
    const { key, email } = await accountWithKey();
    expect((await call(SUSPEND.path, { type: SUSPEND.name, license_key: key })).status).toBe(200);
    await expectAnswer(await call(REINSTATE.path, { type: REINSTATE.name, license_key: key }), 200, { success: true, message: "license key reinstated", changed: true });
    const response = await validate(key, email);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ key, email_address: email });
  });

  it("answers an active key 200 with changed false", async () => {
    const { key } = await accountWithKey();
    await expectAnswer(await call(REINSTATE.path, { type: REINSTATE.name, license_key: key }), 200, { success: true, message: "license key reinstated", changed: false });
  });

  it("takes Standard Webhooks as well", async () => {
    const { key } = await accountWithKey();
    expect((await call(SUSPEND.path, { type: SUSPEND.name, license_key: key })).status).toBe(200);
    expect((await request(REINSTATE.path, standard({ type: REINSTATE.name, license_key: key }))).status).toBe(200);
    expect(await isActive(key)).toBe(true);
  });

  it("answers an unknown key 404 and bad input 400", async () => {
    await expectAnswer(await call(REINSTATE.path, { type: REINSTATE.name, license_key: "NONE-0000-0000-0000" }), 404, { message: "unknown_license" });
    await expectAnswer(await call(REINSTATE.path, { type: REINSTATE.name, key: "NONE-0000-0000-0000" }), 400, { message: "license_key is required" });
  });

  it("refuses a signature made with another secret or for another path", async () => {
    const { key } = await accountWithKey();
    expect((await call(REINSTATE.path, { type: REINSTATE.name, license_key: key }, { secret: "forged" })).status).toBe(401);
    expect((await call(REINSTATE.path, { type: REINSTATE.name, license_key: key }, { signedPath: SUSPEND.path })).status).toBe(401);
  });
});

describe("POST /api/v2/automations/move/key", () => {
  it("moves a key to another account: it validates with that account's e-mail, not the old one", async () => {
    const from = await accountWithKey();
    const to = await accountWithKey();
    await expectAnswer(await call(MOVE.path, { type: MOVE.name, license_key: from.key, account_email: ` ${to.email.toUpperCase()} ` }), 200, {
      success: true,
      message: "license key moved",
      changed: true,
      user_id: to.accountId,
    });
    expect((await validate(from.key, to.email)).status).toBe(200);
    await expectAnswer(await validate(from.key, from.email), 400, { message: "key does not belong to specified user" });
  });

  it("answers a key already in that account 200 with changed false", async () => {
    const { key, email, accountId } = await accountWithKey();
    await expectAnswer(await call(MOVE.path, { type: MOVE.name, license_key: key, account_email: email }), 200, { success: true, message: "license key moved", changed: false, user_id: accountId });
  });

  it("answers an account that does not exist 404 unknown_account, creating none", async () => {
    const { key, accountId } = await accountWithKey();
    const nobody = newEmail("nobody");
    await expectAnswer(await call(MOVE.path, { type: MOVE.name, license_key: key, account_email: nobody }), 404, { message: "unknown_account" });
    expect(await db.query("select 1 from public.accounts where email = $1", [nobody])).toEqual([]);
    expect((await db.query<{ belongs_to: string }>("select belongs_to from public.license_keys where key = $1", [key]))[0].belongs_to).toBe(accountId);
  });

  it("answers an unknown key 404 unknown_license", async () => {
    const to = await accountWithKey();
    await expectAnswer(await call(MOVE.path, { type: MOVE.name, license_key: "NONE-0000-0000-0000", account_email: to.email }), 404, { message: "unknown_license" });
  });

  it("answers 409 name_taken when the other account has a kiosk of the same system name, moving nothing", async () => {
    const from = await accountWithKey({ systemName: "Front Desk" });
    const to = await accountWithKey({ systemName: "front desk" });
    await expectAnswer(await call(MOVE.path, { type: MOVE.name, license_key: from.key, account_email: to.email }), 409, { message: "name_taken" });
    expect((await validate(from.key, from.email)).status).toBe(200);
  });

  it("answers bad input 400: no key, no e-mail, an invalid e-mail", async () => {
    const { key } = await accountWithKey();
    await expectAnswer(await call(MOVE.path, { type: MOVE.name, account_email: "a@example.com" }), 400, { message: "license_key is required" });
    await expectAnswer(await call(MOVE.path, { type: MOVE.name, license_key: key }), 400, { message: "account_email is required" });
    await expectAnswer(await call(MOVE.path, { type: MOVE.name, license_key: key, email: "a@example.com" }), 400, { message: "account_email is required" });
    await expectAnswer(await call(MOVE.path, { type: MOVE.name, license_key: key, account_email: "not an e-mail" }), 400, {
      message: "account_email must be a valid e-mail address of at most 254 characters",
    });
  });

  it("is no onboarding: the same signed Standard Webhooks bytes sent to onboarding are bad input there, creating nothing", async () => {
    const from = await accountWithKey();
    const to = await accountWithKey();
    const init = standard({ type: MOVE.name, license_key: from.key, account_email: to.email });
    await expectAnswer(await request(ONBOARDING_PATH, init), 400, { message: "email is required" });
    expect((await request(MOVE.path, init)).status).toBe(200);
  });

  it("replays a retry of an id, and refuses its id with another target (422)", async () => {
    const from = await accountWithKey();
    const to = await accountWithKey();
    const other = await accountWithKey();
    const id = crypto.randomUUID();
    const first = await (await call(MOVE.path, { type: MOVE.name, license_key: from.key, account_email: to.email }, { idempotencyKey: id })).text();
    expect(await (await call(MOVE.path, { type: MOVE.name, license_key: from.key, account_email: to.email }, { idempotencyKey: id })).text()).toBe(first);
    expect((await call(MOVE.path, { type: MOVE.name, license_key: from.key, account_email: other.email }, { idempotencyKey: id })).status).toBe(422);
    expect((await validate(from.key, to.email)).status).toBe(200);
  });
});

describe("POST /api/v2/automations/change/email", () => {
  it("changes the e-mail: validation and onboarding then go with the new e-mail, and the old one is refused", async () => {
    const { key, email, accountId } = await accountWithKey();
    const renamed = newEmail("renamed");
    await expectAnswer(await call(CHANGE_EMAIL.path, { type: CHANGE_EMAIL.name, account_email: email.toUpperCase(), new_email: ` ${renamed.toUpperCase()} ` }), 200, {
      success: true,
      message: "account e-mail changed",
      changed: true,
      user_id: accountId,
    });
    expect((await validate(key, renamed)).status).toBe(200);
    await expectAnswer(await validate(key, email), 400, { message: "user does not exist" });
    // Onboarding the new e-mail issues a key into the same account; the old e-mail is a new account.
    const onboard = async (address: string) => (await (await call(ONBOARDING_PATH, { email: address })).json()) as { user_id: string };
    expect((await onboard(renamed)).user_id).toBe(accountId);
    expect((await onboard(email)).user_id).not.toBe(accountId);
  });

  it("keeps the keys that belonged to the account by its old e-mail alone", async () => {
    const { email, accountId } = await accountWithKey();
    const unlinked = newKeyText();
    await db.query("insert into public.license_keys (key, account_id, email) values ($1, null, $2)", [unlinked, email]);
    const renamed = newEmail("renamed");
    expect((await call(CHANGE_EMAIL.path, { type: CHANGE_EMAIL.name, account_email: email, new_email: renamed })).status).toBe(200);
    expect((await db.query<{ belongs_to: string }>("select belongs_to from public.license_keys where key = $1", [unlinked]))[0].belongs_to).toBe(accountId);
    expect((await validate(unlinked, renamed)).status).toBe(200);
  });

  it("answers an e-mail another account has 409 email_taken, changing nothing", async () => {
    const one = await accountWithKey();
    const two = await accountWithKey();
    await expectAnswer(await call(CHANGE_EMAIL.path, { type: CHANGE_EMAIL.name, account_email: one.email, new_email: two.email.toUpperCase() }), 409, { message: "email_taken" });
    expect((await validate(one.key, one.email)).status).toBe(200);
  });

  it("answers the same e-mail 200 with changed false", async () => {
    const { email, accountId } = await accountWithKey();
    await expectAnswer(await call(CHANGE_EMAIL.path, { type: CHANGE_EMAIL.name, account_email: email, new_email: email }), 200, { success: true, message: "account e-mail changed", changed: false, user_id: accountId });
  });

  it("answers an unknown account 404 unknown_account", async () => {
    await expectAnswer(await call(CHANGE_EMAIL.path, { type: CHANGE_EMAIL.name, account_email: newEmail("nobody"), new_email: newEmail() }), 404, { message: "unknown_account" });
  });

  it("answers bad input 400: no e-mail, no new e-mail, an invalid new e-mail", async () => {
    await expectAnswer(await call(CHANGE_EMAIL.path, { type: CHANGE_EMAIL.name, new_email: "a@example.com" }), 400, { message: "account_email is required" });
    await expectAnswer(await call(CHANGE_EMAIL.path, { type: CHANGE_EMAIL.name, account_email: "a@example.com" }), 400, { message: "new_email is required" });
    await expectAnswer(await call(CHANGE_EMAIL.path, { type: CHANGE_EMAIL.name, account_email: "a@example.com", new_email: "a@b" }), 400, {
      message: "new_email must be a valid e-mail address of at most 254 characters",
    });
    await expectAnswer(await call(CHANGE_EMAIL.path, { type: CHANGE_EMAIL.name, account_email: "a@example.com", new_email: "a\u202e@example.com" }), 400, {
      message: "new_email must be a valid e-mail address of at most 254 characters",
    });
  });
});

describe("POST /api/v2/automations/resend/license-email", () => {
  it("queues exactly one e-mail through the outbox, sent after the answer to the account's e-mail, with the key", async () => {
    const { key, email } = await accountWithKey();
    const before = mail.sent.length;
    await expectAnswer(await call(RESEND.path, { type: RESEND.name, license_key: key }), 200, { success: true, message: "license e-mail queued", changed: true });
    const sent = mail.sent.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0].to).toBe(email);
    expect(sent[0].text).toContain(key);
    expect(await db.query("select 1 from public.email_outbox where recipient = $1", [email])).toHaveLength(1);
  });

  it("queues nothing again for a retry of its id", async () => {
    const { key, email } = await accountWithKey();
    const init = standard({ type: RESEND.name, license_key: key });
    expect((await request(RESEND.path, init)).status).toBe(200);
    expect((await request(RESEND.path, init)).headers.get("idempotent-replayed")).toBe("true");
    expect(await db.query("select 1 from public.email_outbox where recipient = $1", [email])).toHaveLength(1);
  });

  it("sends to the account's e-mail now, after an e-mail change", async () => {
    const { key, email } = await accountWithKey();
    const renamed = newEmail("renamed");
    expect((await call(CHANGE_EMAIL.path, { type: CHANGE_EMAIL.name, account_email: email, new_email: renamed })).status).toBe(200);
    const before = mail.sent.length;
    expect((await call(RESEND.path, { type: RESEND.name, license_key: key })).status).toBe(200);
    expect(mail.sent.slice(before).map((message) => message.to)).toEqual([renamed]);
  });

  it("answers a suspended key 409 license_not_active and an unknown key 404, queueing nothing", async () => {
    const { key, email } = await accountWithKey();
    expect((await call(SUSPEND.path, { type: SUSPEND.name, license_key: key })).status).toBe(200);
    await expectAnswer(await call(RESEND.path, { type: RESEND.name, license_key: key }), 409, { message: "license_not_active" });
    await expectAnswer(await call(RESEND.path, { type: RESEND.name, license_key: "NONE-0000-0000-0000" }), 404, { message: "unknown_license" });
    expect(await db.query("select 1 from public.email_outbox where recipient = $1", [email])).toEqual([]);
  });

  it("sends a key's e-mail at most 3 times a day: the 4th is 429", async () => {
    const { key } = await accountWithKey();
    for (const expected of [200, 200, 200, 429]) expect((await call(RESEND.path, { type: RESEND.name, license_key: key })).status).toBe(expected);
  });

  it("answers bad input 400", async () => {
    await expectAnswer(await call(RESEND.path, { type: RESEND.name, license_key: "" }), 400, { message: "license_key is required" });
  });
});

describe("the same rules through the Data API: an account holder does none of this", () => {
  const user = "e1000000-0000-4000-8000-000000000001";
  let sql: postgres.Sql;
  let holder: Awaited<ReturnType<typeof accountWithKey>>;
  beforeAll(async () => {
    holder = await accountWithKey();
    await db.query("update public.accounts set auth_user_id = $1 where id = $2", [user, holder.accountId]);
    sql = postgres(database.url, { max: 1, onnotice: () => {} });
  });
  afterAll(() => sql?.end());

  /** A statement as the Data API runs it for the holder: `authenticated`, their JWT claims; rolled back. */
  async function asHolder(text: string, sub = user): Promise<unknown[]> {
    const rollback = new Error("rollback");
    let rows: unknown[] = [];
    await sql
      .begin(async (tx) => {
        await tx.unsafe("set local role authenticated");
        await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub, role: "authenticated" })}, true)`;
        rows = [...(await tx.unsafe(text))];
        throw rollback;
      })
      .catch((error: unknown) => {
        if (error !== rollback) throw error;
      });
    return rows;
  }
  const denied = { code: "42501" };

  it("cannot suspend or reinstate their key, move it, or change the account's e-mail by writing the tables", async () => {
    await expect(asHolder(`update public.license_keys set active = false where key = '${holder.key}'`)).rejects.toMatchObject(denied);
    await expect(asHolder(`update public.license_keys set active = true where key = '${holder.key}'`)).rejects.toMatchObject(denied);
    await expect(asHolder(`update public.license_keys set account_id = null, email = 'x@example.com' where key = '${holder.key}'`)).rejects.toMatchObject(denied);
    await expect(asHolder("update public.accounts set email = 'x@example.com'")).rejects.toMatchObject(denied);
  });

  it("cannot run the lifecycle functions", async () => {
    for (const text of [
      `select * from cadence.suspend_license_key('${holder.key}')`,
      `select * from cadence.reinstate_license_key('${holder.key}')`,
      `select * from cadence.move_license_key('${holder.key}', 'demo@example.com')`,
      `select * from cadence.change_account_email('${holder.email}', 'x@example.com')`,
      `select * from cadence.lifecycle_change('reinstate', '{"license_key":"${holder.key}"}', now())`,
    ]) {
      await expect(asHolder(text)).rejects.toMatchObject(denied);
    }
  });

  it("reads the key's suspension; after a move the old holder reads the key no more, the new one does", async () => {
    expect((await call(SUSPEND.path, { type: SUSPEND.name, license_key: holder.key })).status).toBe(200);
    expect(await asHolder("select key, active from public.license_keys")).toEqual([{ key: holder.key, active: false }]);
    const to = await accountWithKey();
    const newUser = "e1000000-0000-4000-8000-000000000002";
    await db.query("update public.accounts set auth_user_id = $1 where id = $2", [newUser, to.accountId]);
    expect((await call(MOVE.path, { type: MOVE.name, license_key: holder.key, account_email: to.email })).status).toBe(200);
    expect(await asHolder("select key from public.license_keys")).toEqual([]);
    expect(await asHolder("select key from public.license_keys order by key", newUser)).toEqual([{ key: holder.key }, { key: to.key }].sort((a, b) => a.key.localeCompare(b.key)));
  });
});

const haveRedis = redisServerAvailable();

describe.skipIf(!haveRedis)("the lifecycle limits through Upstash (its REST API faked at the HTTP boundary, on a real redis-server)", () => {
  let redis: RedisServer;
  let backend: PlainRedis;
  let stub: UpstashStub;
  let store: LimiterStore;
  let upstash: ReturnType<typeof testApp>["request"];
  const silent = memoryLogger().log;

  beforeAll(async () => {
    redis = await startRedis();
    backend = await openPlainRedis(redis.url, { commandTimeoutMs: PATIENT.checkMs, connectWaitMs: PATIENT.connectMs, log: silent });
    stub = await startUpstashStub(backend.requester);
    store = await createLimiter({ UPSTASH_REDIS_REST_URL: stub.url, UPSTASH_REDIS_REST_TOKEN: stub.token }, silent, Date.now, { bounds: PATIENT });
    ({ request: upstash } = testApp(db, { signingSecret: SECRET, limiter: store.limiter, mailer: mail.mailer }));
  });
  afterAll(async () => {
    await store?.close();
    await stub?.stop();
    await backend?.close();
    await redis?.stop();
  });

  /** A call signed on the real clock, as this app runs on it. */
  const send = async (path: string, body: unknown, ip: string) => upstash(path, await signed(path, body, { nowMs: Date.now(), ip }));

  /**
   * Runs `attempt` (its try number given) until one runs within one window of the real clock as
   * @upstash/ratelimit's fixedWindow counts it (`Math.floor(Date.now() / windowMs)`): calls split
   * over two windows are two counts, as the limit means. Each try starts with at least half a
   * window ahead, or 30 s of a longer one, waiting for the next window if less is left.
   */
  async function inOneWindow<T>(windowMs: number, attempt: (n: number) => Promise<T>): Promise<T> {
    for (let n = 0; ; n++) {
      const left = windowMs - (Date.now() % windowMs);
      if (left < Math.min(windowMs / 2, 30_000)) await new Promise((resolve) => setTimeout(resolve, left));
      const window = Math.floor(Date.now() / windowMs);
      const result = await attempt(n);
      if (Math.floor(Date.now() / windowMs) === window) return result;
    }
  }

  it("refuses the 61st lifecycle call of a minute from one client IP, whichever call, with 429 and Retry-After", async () => {
    const { statuses, over } = await inOneWindow(RULES.lifecyclePerIp.windowMs, async (n) => {
      const ip = `192.0.2.${61 + n}`;
      const statuses = [];
      for (let i = 0; i < 60; i++) {
        const call = i % 2 ? SUSPEND : REINSTATE;
        statuses.push((await send(call.path, { type: call.name, license_key: "NONE-0000-0000-0000" }, ip)).status);
      }
      return { statuses, over: await send(MOVE.path, { type: MOVE.name, license_key: "NONE-0000-0000-0000", account_email: "a@example.com" }, ip) };
    });
    expect(statuses).toEqual(Array(60).fill(404));
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(stub.requests.length).toBeGreaterThan(0);
  });

  it("sends a key's license e-mail at most 3 times a day", async () => {
    const statuses = await inOneWindow(RULES.resendPerKey.windowMs, async () => {
      const { key } = await accountWithKey();
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await send(RESEND.path, { type: RESEND.name, license_key: key }, `198.51.100.${70 + i}`)).status);
      return statuses;
    });
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});

describeDirectOnly("npm run sign -- <call> (functions/cli/sign-onboarding.ts)", () => {
  const root = new URL("../../", import.meta.url).pathname;
  const run = promisify(execFile);

  /** The headers and body of a printed curl command, as the shell unquotes them. */
  async function parsed(stdout: string) {
    const { stdout: args } = await run("sh", ["-c", stdout.replace(/^curl/, "printf '%s\\n'")]);
    const lines = args.trimEnd().split("\n");
    const headers = Object.fromEntries(lines.flatMap((line, i) => (lines[i - 1] === "-H" ? [line.split(/: (.*)/s).slice(0, 2)] : [])));
    return { headers, body: lines[lines.indexOf("--data-raw") + 1] };
  }

  it("prints a signed suspend that the server carries out once", async () => {
    const { key } = await accountWithKey();
    const { stdout } = await run(`${root}node_modules/.bin/deno`, ["run", "--allow-env", "functions/cli/sign-onboarding.ts", "suspend", "--key", key, "--url", "http://localhost:8000/"], {
      cwd: root,
      env: childEnv({ SIGNING_SECRET: SECRET }),
    });
    expect(stdout.startsWith("curl -sS -X POST 'http://localhost:8000/api/v2/automations/suspend/key'")).toBe(true);
    const { headers, body } = await parsed(stdout);
    expect(JSON.parse(body)).toEqual({ type: "suspend", license_key: key });
    const { request: live } = testApp(db, { signingSecret: SECRET, mailer: memoryMailer().mailer });
    expect((await live(SUSPEND.path, { method: "POST", headers, body })).status).toBe(200);
    expect((await live(SUSPEND.path, { method: "POST", headers, body })).status).toBe(401);
    expect(await isActive(key)).toBe(false);
  });

  it("prints every call's path and body, under Standard Webhooks too", async () => {
    const flags: Record<string, string[]> = {
      suspend: ["--key", "DEMO-0000-0000-0001"],
      reinstate: ["--key", "DEMO-0000-0000-0001"],
      move: ["--key", "DEMO-0000-0000-0001", "--email", "other@example.com"],
      "change-email": ["--email", "a@example.com", "--new-email", "b@example.com"],
      resend: ["--key", "DEMO-0000-0000-0001"],
    };
    for (const lifecycle of LIFECYCLE_CALLS) {
      const { stdout } = await run(
        `${root}node_modules/.bin/deno`,
        ["run", "--allow-env", "functions/cli/sign-onboarding.ts", lifecycle.name, ...flags[lifecycle.name], "--scheme", "standard-webhooks", "--idempotency-key", "msg_1"],
        { cwd: root, env: childEnv({ STANDARD_WEBHOOKS_SECRET: WEBHOOK_SECRET }) },
      );
      expect(stdout).toContain(`'http://localhost:8000${lifecycle.path}'`);
      const { headers, body } = await parsed(stdout);
      expect(headers["webhook-id"]).toBe("msg_1");
      expect(() => lifecycle.parse(JSON.parse(body))).not.toThrow();
    }
  });

  it("names a missing flag and an unknown call, exiting 1", async () => {
    const sign = (...args: string[]) =>
      run(`${root}node_modules/.bin/deno`, ["run", "--allow-env", "functions/cli/sign-onboarding.ts", ...args], { cwd: root, env: childEnv({ SIGNING_SECRET: SECRET }) }).then(
        () => undefined,
        (error: { code: number; stderr: string }) => error,
      );
    const missing = await sign("move", "--key", "DEMO-0000-0000-0001");
    expect(missing?.code).toBe(1);
    expect(missing?.stderr).toMatch(/^--email is required for move\n/);
    const unknown = await sign("revoke", "--key", "DEMO-0000-0000-0001");
    expect(unknown?.code).toBe(1);
    expect(unknown?.stderr).toMatch(/^Unknown call 'revoke'\n/);
  });
});
