import { execFile } from "node:child_process";
import { createHmac } from "node:crypto";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { signOnboardingRequest } from "../../functions/app/signatures/signed-request.ts";
import { canonicalRequest, signRequest } from "../../functions/app/signatures/spec-signature.ts";
import { recordNonce } from "../../functions/app/onboarding/store.ts";
import { testApp, uniqueIp } from "../support/app.ts";
import { testClock } from "../support/clock.ts";
import { childEnv } from "../support/child-env.ts";
import { describeDirectOnly, scopedDatabase } from "../support/database.ts";
import { memoryMailer } from "../support/mailer.ts";
import { ONBOARDING_PATH, SECRET, signedInit, WEBHOOK_SECRET } from "../support/onboarding.ts";

const database = scopedDatabase();
const clock = testClock();
let request: ReturnType<typeof testApp>["request"];

beforeAll(async () => {
  ({ request } = testApp(database.db, { now: clock.now, signingSecret: SECRET, mailer: memoryMailer().mailer }));
});

const INVALID = '{"error":"invalid signature"}';
let emails = 0;
/** A new account's body, so the per-e-mail limit never interferes. */
const body = () => JSON.stringify({ email: `signer${++emails}@example.com` });

/** Sends `init` and expects the one 401 answer every signature failure shares. */
async function expectInvalid(init: RequestInit) {
  const response = await request(ONBOARDING_PATH, init);
  expect(response.status).toBe(401);
  expect(response.headers.get("content-type")).toBe("application/json");
  expect(await response.text()).toBe(INVALID);
}

/** A correctly signed request with one header replaced (or removed, when `value` is undefined). */
async function withHeader(name: string, value: string | undefined) {
  const init = await signedInit(body(), { nowMs: clock.now() });
  const headers = new Headers(init.headers);
  if (value === undefined) headers.delete(name);
  else headers.set(name, value);
  return { ...init, headers };
}

describeDirectOnly("the canonical string", () => {
  it("is POST, the path, x-timestamp, x-nonce and the raw body, joined by newlines", () => {
    const bytes = canonicalRequest("1795262400", "n-1", new TextEncoder().encode('{"email":"a@b.co"}'));
    expect(new TextDecoder().decode(bytes)).toBe(
      'POST\n/api/v2/automations/create/account\n1795262400\nn-1\n{"email":"a@b.co"}',
    );
  });

  it("is signed as the lowercase hex HMAC-SHA256 an integrator computes with any HMAC library", async () => {
    const raw = '{"email":"ada@example.com","name":"Ada"}';
    const expected = createHmac("sha256", SECRET)
      .update(`POST\n/api/v2/automations/create/account\n1795262400\nabc\n${raw}`)
      .digest("hex");
    expect(await signRequest(SECRET, "1795262400", "abc", new TextEncoder().encode(raw))).toBe(expected);
  });

  it("covers the body's exact bytes, not its parsed value", async () => {
    const signed = await signOnboardingRequest(SECRET, '{"email":"same@example.com"}', { nowMs: clock.now() });
    await expectInvalid({ method: "POST", headers: signed.headers, body: '{ "email": "same@example.com" }' });
  });
});

describe("POST /api/v2/automations/create/account: every signature failure is the same 401", () => {
  it("accepts a correctly signed request", async () => {
    const response = await request(ONBOARDING_PATH, await signedInit(body(), { nowMs: clock.now() }));
    expect(response.status).toBe(200);
  });

  for (const header of ["x-timestamp", "x-nonce", "x-signature"]) {
    it(`refuses a request without ${header}`, async () => {
      await expectInvalid(await withHeader(header, undefined));
    });
  }

  it("refuses a signature that is not 64 hex characters", async () => {
    await expectInvalid(await withHeader("x-signature", "abc123"));
    await expectInvalid(await withHeader("x-signature", "z".repeat(64)));
    // The right digest one character short, and with one hex character more.
    for (const change of [(hex: string) => hex.slice(0, 63), (hex: string) => `${hex}0`]) {
      const init = await signedInit(body(), { nowMs: clock.now() });
      const headers = new Headers(init.headers);
      headers.set("x-signature", change(headers.get("x-signature")!));
      await expectInvalid({ ...init, headers });
    }
  });

  it("refuses an uppercase signature, though it spells the right digest", async () => {
    const init = await signedInit(body(), { nowMs: clock.now() });
    const headers = new Headers(init.headers);
    headers.set("x-signature", headers.get("x-signature")!.toUpperCase());
    await expectInvalid({ ...init, headers });
  });

  it("refuses a request signed with another secret", async () => {
    await expectInvalid(await signedInit(body(), { nowMs: clock.now(), secret: "not-the-secret" }));
  });

  it("accepts a timestamp 300 seconds old or ahead, and refuses one 301 seconds either way", async () => {
    for (const skew of [-300, 300]) {
      const response = await request(ONBOARDING_PATH, await signedInit(body(), { nowMs: clock.now() + skew * 1000 }));
      expect(response.status).toBe(200);
    }
    for (const skew of [-301, 301]) {
      await expectInvalid(await signedInit(body(), { nowMs: clock.now() + skew * 1000 }));
    }
  });

  it("refuses a timestamp in milliseconds, even when correctly signed", async () => {
    const raw = body();
    const timestamp = String(clock.now());
    const signature = await signRequest(SECRET, timestamp, "ms-nonce", new TextEncoder().encode(raw));
    await expectInvalid({
      method: "POST",
      headers: { "x-timestamp": timestamp, "x-nonce": "ms-nonce", "x-signature": signature },
      body: raw,
    });
  });

  it("refuses a timestamp that is not whole seconds in digits (NaN, empty, signed, fractional, exponent)", async () => {
    const seconds = Math.floor(clock.now() / 1000);
    for (const timestamp of ["NaN", "", " ", `+${seconds}`, `${seconds}.0`, `${seconds / 1e9}e9`, "0x6A"]) {
      const raw = body();
      const nonce = crypto.randomUUID();
      const signature = await signRequest(SECRET, timestamp, nonce, new TextEncoder().encode(raw));
      await expectInvalid({
        method: "POST",
        headers: { "x-timestamp": timestamp, "x-nonce": nonce, "x-signature": signature },
        body: raw,
      });
    }
  });

  it("refuses a nonce that is empty, over 128 characters, or not printable ASCII", async () => {
    for (const nonce of ["", "n".repeat(129), "two words", "caf\u00e9"]) {
      const raw = body();
      const timestamp = String(Math.floor(clock.now() / 1000));
      const signature = await signRequest(SECRET, timestamp, nonce, new TextEncoder().encode(raw));
      await expectInvalid({
        method: "POST",
        headers: { "x-timestamp": timestamp, "x-nonce": nonce, "x-signature": signature },
        body: raw,
      });
    }
    const longest = "n".repeat(128);
    expect((await request(ONBOARDING_PATH, await signedInit(body(), { nowMs: clock.now(), nonce: longest }))).status).toBe(200);
  });

  it("refuses a replay: the same signed request twice", async () => {
    const init = await signedInit(body(), { nowMs: clock.now() });
    expect((await request(ONBOARDING_PATH, init)).status).toBe(200);
    await expectInvalid(init);
  });

  it("refuses a used nonce under a new timestamp and a fresh signature", async () => {
    const nonce = crypto.randomUUID();
    expect((await request(ONBOARDING_PATH, await signedInit(body(), { nowMs: clock.now(), nonce }))).status).toBe(200);
    await expectInvalid(await signedInit(body(), { nowMs: clock.now() + 5_000, nonce }));
  });

  it("spends no nonce on a request whose signature fails", async () => {
    const nonce = crypto.randomUUID();
    await expectInvalid(await signedInit(body(), { nowMs: clock.now(), nonce, secret: "forged" }));
    expect((await request(ONBOARDING_PATH, await signedInit(body(), { nowMs: clock.now(), nonce }))).status).toBe(200);
  });

  it("answers ten identical signed requests in parallel with exactly one 200 and nine 401", async () => {
    const init = await signedInit(body(), { nowMs: clock.now() });
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => request(ONBOARDING_PATH, { ...init, headers: { ...(init.headers as Record<string, string>), "x-forwarded-for": uniqueIp() } })),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([200, 401, 401, 401, 401, 401, 401, 401, 401, 401]);
    const bodies = await Promise.all(responses.filter((r) => r.status === 401).map((r) => r.text()));
    expect(new Set(bodies)).toEqual(new Set([INVALID]));
  });
});

describe("POST /api/v2/automations/create/account without SIGNING_SECRET", () => {
  it("refuses every request, however it is signed", async () => {
    const { request: unsigned } = testApp(database.db, { now: clock.now, mailer: memoryMailer().mailer });
    for (const secret of [SECRET, "any-other-secret"]) {
      const response = await unsigned(ONBOARDING_PATH, await signedInit(body(), { nowMs: clock.now(), secret }));
      expect(response.status).toBe(401);
      expect(await response.text()).toBe(INVALID);
    }
  });
});

describe("POST /api/v2/automations/create/account while SIGNING_SECRET_PREVIOUS is set (a rotation)", () => {
  const NEW = "rotated-in-secret-0123456789";
  let rotating: ReturnType<typeof testApp>["request"];
  beforeAll(() => {
    ({ request: rotating } = testApp(database.db, {
      now: clock.now,
      signingSecret: NEW,
      signingSecretPrevious: SECRET,
      mailer: memoryMailer().mailer,
    }));
  });

  it("accepts a request signed with the new secret", async () => {
    expect((await rotating(ONBOARDING_PATH, await signedInit(body(), { nowMs: clock.now(), secret: NEW }))).status).toBe(200);
  });

  it("accepts a request signed with the previous secret, within the same skew", async () => {
    for (const skew of [-300, 0, 300]) {
      const init = await signedInit(body(), { nowMs: clock.now() + skew * 1000, secret: SECRET });
      expect((await rotating(ONBOARDING_PATH, init)).status).toBe(200);
    }
    const late = await signedInit(body(), { nowMs: clock.now() + 301_000, secret: SECRET });
    expect(await (await rotating(ONBOARDING_PATH, late)).text()).toBe(INVALID);
  });

  it("refuses a request signed with neither", async () => {
    const response = await rotating(ONBOARDING_PATH, await signedInit(body(), { nowMs: clock.now(), secret: "neither-secret" }));
    expect(response.status).toBe(401);
    expect(await response.text()).toBe(INVALID);
  });

  it("spends a nonce for both secrets: used with one, it is a replay with the other", async () => {
    for (const [first, second] of [[SECRET, NEW], [NEW, SECRET]]) {
      const nonce = crypto.randomUUID();
      expect((await rotating(ONBOARDING_PATH, await signedInit(body(), { nowMs: clock.now(), nonce, secret: first }))).status).toBe(200);
      const replay = await rotating(ONBOARDING_PATH, await signedInit(body(), { nowMs: clock.now(), nonce, secret: second }));
      expect(replay.status).toBe(401);
      expect(await replay.text()).toBe(INVALID);
    }
  });

  it("refuses the previous secret once it is removed: only SIGNING_SECRET signs", async () => {
    const { request: rotated } = testApp(database.db, { now: clock.now, signingSecret: NEW, mailer: memoryMailer().mailer });
    const response = await rotated(ONBOARDING_PATH, await signedInit(body(), { nowMs: clock.now(), secret: SECRET }));
    expect(response.status).toBe(401);
    expect((await rotated(ONBOARDING_PATH, await signedInit(body(), { nowMs: clock.now(), secret: NEW }))).status).toBe(200);
  });

  it("verifies nothing with only a previous secret: without SIGNING_SECRET every request is refused", async () => {
    const { request: unset } = testApp(database.db, { now: clock.now, signingSecretPrevious: SECRET, mailer: memoryMailer().mailer });
    const response = await unset(ONBOARDING_PATH, await signedInit(body(), { nowMs: clock.now(), secret: SECRET }));
    expect(response.status).toBe(401);
  });
});

describe("cadence.record_webhook_nonce", () => {
  it("remembers a nonce for the whole two-sided window of 600 seconds, then forgets it", async () => {
    const nonce = crypto.randomUUID();
    const at = clock.now();
    expect(await recordNonce(database.db, nonce, at)).toBe(true);
    expect(await recordNonce(database.db, nonce, at + 599_000)).toBe(false);
    expect(await recordNonce(database.db, nonce, at + 600_000)).toBe(false);
    expect(await recordNonce(database.db, nonce, at + 601_000)).toBe(true);
  });

  it("lets exactly one of ten simultaneous callers record a nonce", async () => {
    const nonce = crypto.randomUUID();
    const results = await Promise.all(Array.from({ length: 10 }, () => recordNonce(database.db, nonce, clock.now())));
    expect(results.filter(Boolean)).toHaveLength(1);
  });
});

describeDirectOnly("npm run sign (functions/cli/sign-onboarding.ts)", () => {
  it("prints a curl command, signed with the project's own code, that the server accepts once", async () => {
    const root = new URL("../../", import.meta.url).pathname;
    const run = promisify(execFile);
    const { stdout } = await run(
      `${root}node_modules/.bin/deno`,
      ["run", "--allow-env", "functions/cli/sign-onboarding.ts", "--email", "Curl.User@example.com", "--name", "O'Brien \"Curl\"", "--url", "http://localhost:8000/"],
      { cwd: root, env: childEnv({ SIGNING_SECRET: SECRET }) },
    );
    expect(stdout.startsWith("curl -sS -X POST 'http://localhost:8000/api/v2/automations/create/account'")).toBe(true);
    // The shell itself unquotes the arguments, as it would for curl.
    const { stdout: args } = await run("sh", ["-c", stdout.replace(/^curl/, "printf '%s\\n'")]);
    const lines = args.trimEnd().split("\n");
    const headers = Object.fromEntries(
      lines.flatMap((line, i) => (lines[i - 1] === "-H" ? [line.split(/: (.*)/s).slice(0, 2)] : [])),
    );
    const body = lines[lines.indexOf("--data-raw") + 1];
    expect(JSON.parse(body)).toEqual({ email: "Curl.User@example.com", name: `O'Brien "Curl"` });
    expect(headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/);
    const { request: live } = testApp(database.db, { signingSecret: SECRET, mailer: memoryMailer().mailer });
    const init = { method: "POST", headers, body };
    expect((await live(ONBOARDING_PATH, init)).status).toBe(200);
    expect((await live(ONBOARDING_PATH, init)).status).toBe(401);
  });

  it("prints a Standard Webhooks request with the given id, which the server accepts and answers again as a retry", async () => {
    const root = new URL("../../", import.meta.url).pathname;
    const run = promisify(execFile);
    const { stdout } = await run(
      `${root}node_modules/.bin/deno`,
      ["run", "--allow-env", "functions/cli/sign-onboarding.ts", "--scheme", "standard-webhooks", "--email", "Standard.Curl@example.com", "--idempotency-key", "msg_cli_1"],
      { cwd: root, env: childEnv({ STANDARD_WEBHOOKS_SECRET: WEBHOOK_SECRET }) },
    );
    const { stdout: args } = await run("sh", ["-c", stdout.replace(/^curl/, "printf '%s\\n'")]);
    const lines = args.trimEnd().split("\n");
    const headers = Object.fromEntries(
      lines.flatMap((line, i) => (lines[i - 1] === "-H" ? [line.split(/: (.*)/s).slice(0, 2)] : [])),
    );
    expect(headers["webhook-id"]).toBe("msg_cli_1");
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    const init = { method: "POST", headers, body: lines[lines.indexOf("--data-raw") + 1] };
    const { request: live } = testApp(database.db, { standardWebhooksSecret: WEBHOOK_SECRET, mailer: memoryMailer().mailer });
    const first = await live(ONBOARDING_PATH, init);
    expect(first.status).toBe(200);
    const retry = await live(ONBOARDING_PATH, init);
    expect(retry.status).toBe(200);
    expect(await retry.text()).toBe(await first.text());
  });

  it("an unknown flag prints the usage and exits 1, without a stack trace; --help prints it and exits 0", async () => {
    const root = new URL("../../", import.meta.url).pathname;
    const sign = (flag: string) =>
      promisify(execFile)(
        `${root}node_modules/.bin/deno`,
        ["run", "--allow-env", "functions/cli/sign-onboarding.ts", flag],
        { cwd: root, env: childEnv({ SIGNING_SECRET: SECRET }) },
      );
    const failed = await sign("--bogus").then(() => undefined, (error: { code: number; stderr: string }) => error);
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toMatch(/^Unknown option '--bogus'\nusage: npm run -s sign -- --email <address> \[--name <display name>\] \[--url <base url>\]\n/);
    expect(failed?.stderr).not.toMatch(/at .*\.ts:\d+/);
    const help = await sign("--help");
    expect(help.stdout).toMatch(/^usage: npm run -s sign -- --email <address>/);
    expect(help.stdout).toContain("--url              the server's base URL");
  });
});
