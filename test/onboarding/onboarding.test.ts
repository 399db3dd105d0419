import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { generateLicenseKey } from "../../functions/app/onboarding/license-key-generator.ts";
import { onboardAccount } from "../../functions/app/onboarding/onboard-account.ts";
import { OnboardingResponse } from "../../functions/app/onboarding/schemas.ts";
import { memoryLogger, testApp, uniqueIp, unlimitedLimiter } from "../support/app.ts";
import { testClock } from "../support/clock.ts";
import { describeDirectOnly, scopedDatabase } from "../support/database.ts";
import { memoryMailer } from "../support/mailer.ts";
import { ONBOARDING_PATH, SECRET, signedInit } from "../support/onboarding.ts";
import { startResendStub } from "../support/resend-stub.ts";
import { startServer } from "../support/server.ts";

const KEY_PATTERN = /^[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$/;
const DEMO_ACCOUNT = "a0000000-0000-4000-8000-000000000001";

const database = scopedDatabase();
let db: Database;
const clock = testClock();
const mail = memoryMailer();
const logger = memoryLogger();
let request: ReturnType<typeof testApp>["request"];

beforeAll(async () => {
  db = database.db;
  ({ request } = testApp(db, { now: clock.now, signingSecret: SECRET, mailer: mail.mailer, log: logger.log }));
});

let counter = 0;
/** An e-mail no other test uses, so accounts and per-e-mail limits never interfere. */
const newEmail = (prefix = "user") => `${prefix}${++counter}@example.com`;

async function onboard(body: unknown, options: { ip?: string } = {}) {
  return request(ONBOARDING_PATH, await signedInit(body, { nowMs: clock.now(), ...options }));
}

async function expectMessage(response: Response, status: number, message: string) {
  expect(response.status).toBe(status);
  expect(await response.json()).toEqual({ message });
}

const accountsOf = (email: string) =>
  db.query<{ id: string; email: string; display_name: string }>(
    "select id::text, email, display_name from public.accounts where lower(email) = lower($1)",
    [email],
  );
const keysOf = (accountId: string, on = db) =>
  on.query<{ key: string; email: string; active: boolean }>(
    "select key, email, active from public.license_keys where account_id = $1 order by created_at",
    [accountId],
  );
const outboxOf = (email: string) =>
  db.query<{ status: string; attempts: number; last_error: string | null; text_body: string }>(
    "select status, attempts, last_error, text_body from public.email_outbox where recipient = $1",
    [email],
  );

describe("POST /api/v2/automations/create/account: account and key", () => {
  it("creates the account if absent and answers success, message and user_id", async () => {
    const email = newEmail("Ada.Lovelace");
    const response = await onboard({ email: ` ${email.toUpperCase()} `, name: "  Ada Lovelace " });
    expect(response.status).toBe(200);
    const answer = OnboardingResponse.parse(await response.json());
    expect(answer.success).toBe(true);
    expect(answer.message).toBe("account ready; the license key is on its way by e-mail");
    expect(await accountsOf(email)).toEqual([
      { id: answer.user_id, email: email.toLowerCase(), display_name: "Ada Lovelace" },
    ]);
  });

  it("names the account after the e-mail's local part when name is absent, null or blank", async () => {
    for (const name of [undefined, null, "   "]) {
      const email = newEmail("local.part");
      expect((await onboard({ email, name })).status).toBe(200);
      const [account] = await accountsOf(email);
      expect(account.display_name).toBe(email.slice(0, email.indexOf("@")));
    }
  });

  it("finds an existing account regardless of case and issues it one more key", async () => {
    const before = await keysOf(DEMO_ACCOUNT);
    const response = await onboard({ email: "DEMO@Example.COM", name: "Someone Else" });
    expect(response.status).toBe(200);
    expect((await response.json()).user_id).toBe(DEMO_ACCOUNT);
    const after = await keysOf(DEMO_ACCOUNT);
    expect(after).toHaveLength(before.length + 1);
    expect(after.at(-1)).toMatchObject({ email: "demo@example.com", active: true });
    expect((await accountsOf("demo@example.com"))[0].display_name).toBe("Demo Account");
  });

  it("issues a key in the spec's pattern that validates with the account e-mail", async () => {
    const email = newEmail("validates");
    const { user_id } = await (await onboard({ email })).json();
    const [{ key }] = await keysOf(user_id);
    expect(key).toMatch(KEY_PATTERN);
    const [pairing] = await db.query("select outcome, key_active from cadence.license_pairing($1, $2)", [key, email.toUpperCase()]);
    expect(pairing).toEqual({ outcome: "paired", key_active: true });
    const validation = await request("/api/v2/license", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ license_key: key, email_address: email }),
    });
    expect(validation.status).toBe(200);
    expect(await validation.json()).toMatchObject({ key, email_address: email });
  });

  it("creates one account and ten keys for ten simultaneous onboardings of one new e-mail", async () => {
    const { request: parallel } = testApp(db, { now: clock.now, signingSecret: SECRET, mailer: mail.mailer, limiter: unlimitedLimiter });
    const email = newEmail("together");
    const responses = await Promise.all(
      Array.from({ length: 10 }, async (_, i) =>
        parallel(ONBOARDING_PATH, await signedInit({ email: i % 2 ? email : email.toUpperCase() }, { nowMs: clock.now() })),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(10).fill(200));
    const ids = new Set(await Promise.all(responses.map(async (response) => (await response.json()).user_id)));
    const accounts = await accountsOf(email);
    expect(accounts).toHaveLength(1);
    expect([...ids]).toEqual([accounts[0].id]);
    const keys = await keysOf(accounts[0].id);
    expect(new Set(keys.map((row) => row.key)).size).toBe(10);
    expect(await outboxOf(email)).toHaveLength(10);
  });

  it("draws another key when the one drawn is taken, leaving the taken key with its owner", async () => {
    const email = newEmail("collision");
    const draws = ["DEMO-0000-0000-0004", "ZZZZ-0000-0000-0001"];
    const onboarded = await onboardAccount({ db, now: clock.now, newKey: () => draws.shift()! }, { email, name: "Collision" });
    expect(onboarded.key).toBe("ZZZZ-0000-0000-0001");
    expect((await keysOf(onboarded.accountId)).map((row) => row.key)).toEqual(["ZZZZ-0000-0000-0001"]);
    const [taken] = await db.query("select account_id::text from public.license_keys where key = 'DEMO-0000-0000-0004'");
    expect(taken).toEqual({ account_id: "a0000000-0000-4000-8000-000000000002" });
    expect((await outboxOf(email))[0].text_body).toContain("ZZZZ-0000-0000-0001");
  });

  it("answers 500 with a message when the account cannot be created, and logs neither body nor e-mail", async () => {
    const failing: Database = {
      ...db,
      query: (text, params) => (text.includes("cadence.onboard(") ? Promise.reject(new Error("connection lost")) : db.query(text, params)),
    };
    const log = memoryLogger();
    const { request: broken } = testApp(failing, { now: clock.now, signingSecret: SECRET, mailer: mail.mailer, log: log.log });
    const email = newEmail("unlucky");
    const response = await broken(ONBOARDING_PATH, await signedInit({ email, name: "Unlucky" }, { nowMs: clock.now() }));
    await expectMessage(response, 500, "the account could not be created");
    expect(log.lines.join("\n")).toContain("onboarding_failed");
    expect(log.lines.join("\n")).not.toMatch(/unlucky|Unlucky/i);
    expect(await accountsOf(email)).toEqual([]);
  });
});

describe("POST /api/v2/automations/create/account: the e-mail", () => {
  it("sends the key in a text and an HTML body from one template, escaping the name in HTML", async () => {
    const email = newEmail("mail");
    const { user_id } = await (await onboard({ email, name: "<b>Ada</b> & Co" })).json();
    const [{ key }] = await keysOf(user_id);
    const message = mail.sent.find((sent) => sent.to === email)!;
    expect(message.subject).toBe("Your Cadence license key");
    expect(message.text).toContain(key);
    expect(message.text).toContain("Hello <b>Ada</b> & Co,");
    expect(message.html).toContain(key);
    expect(message.html).toContain("Hello &lt;b&gt;Ada&lt;/b&gt; &amp; Co,");
    expect(message.html).not.toContain("<b>Ada</b>");
    expect(await outboxOf(email)).toMatchObject([{ status: "sent", attempts: 1, last_error: null }]);
  });

  it("answers 200 when delivery fails, leaving the e-mail queued with its error", async () => {
    const email = newEmail("queued");
    mail.failNext();
    const response = await onboard({ email });
    expect(response.status).toBe(200);
    expect(mail.sent.some((sent) => sent.to === email)).toBe(false);
    expect(await outboxOf(email)).toMatchObject([{ status: "pending", attempts: 1, last_error: "mail API unavailable (503)" }]);
  });

  it("logs the account and a masked key, never the body, the e-mail, the full key or the secret", async () => {
    const email = newEmail("quiet");
    const { user_id } = await (await onboard({ email, name: "Quiet Name" })).json();
    const [{ key }] = await keysOf(user_id);
    const logged = logger.lines.join("\n");
    expect(logged).toContain(user_id);
    expect(logged).toContain(`${key.slice(0, 4)}-****-****-****`);
    for (const secret of [key, email, "Quiet Name", SECRET]) expect(logged).not.toContain(secret);
  });
});

describe("POST /api/v2/automations/create/account: body", () => {
  it("answers 400 `request body is required` for an empty body", async () => {
    await expectMessage(await onboard(""), 400, "request body is required");
  });

  it("answers 400 `invalid JSON body` for a body that is not JSON", async () => {
    await expectMessage(await onboard('{"email": '), 400, "invalid JSON body");
  });

  it("answers 400 `email is required` when email is missing, not a string or blank", async () => {
    for (const body of [{}, { name: "No Mail" }, { email: 42 }, { email: "   " }, [], JSON.stringify("just a string"), "null"]) {
      await expectMessage(await onboard(body), 400, "email is required");
    }
  });

  it("answers 400 for an e-mail that is invalid or longer than 254 characters, and accepts 254", async () => {
    const message = "email must be a valid e-mail address of at most 254 characters";
    for (const email of ["not-an-email", "a@b", "two@at@example.com", `${"a".repeat(243)}@example.com`]) {
      await expectMessage(await onboard({ email }), 400, message);
    }
    const longest = `${"b".repeat(242)}@example.com`;
    expect(longest).toHaveLength(254);
    expect((await onboard({ email: longest })).status).toBe(200);
  });

  it("answers 400 for a name that is not a string or longer than 120 characters, and accepts 120", async () => {
    const message = "name must be a string of at most 120 characters";
    for (const name of [42, "n".repeat(121), { first: "Ada" }]) {
      await expectMessage(await onboard({ email: newEmail("named"), name }), 400, message);
    }
    expect((await onboard({ email: newEmail("named"), name: "n".repeat(120) })).status).toBe(200);
  });

  it("answers 413 for a body over 64 KiB, before looking at the signature", async () => {
    const response = await request(ONBOARDING_PATH, { method: "POST", body: "x".repeat(64 * 1024 + 1) });
    await expectMessage(response, 413, "request body must not exceed 64 KiB");
  });
});

describe("POST /api/v2/automations/create/account: rate limits (section 8)", () => {
  it("allows 5 requests per minute per client IP, counted before the signature is checked", async () => {
    const ip = uniqueIp();
    for (let i = 0; i < 5; i++) {
      const response = await request(ONBOARDING_PATH, { method: "POST", headers: { "x-forwarded-for": ip }, body: "{}" });
      expect(response.status).toBe(401);
    }
    const refused = await onboard({ email: newEmail("sixth") }, { ip });
    await expectMessage(refused, 429, "too many requests");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await onboard({ email: newEmail("elsewhere") }, { ip: uniqueIp() })).status).toBe(200);
  });

  it("allows 3 onboardings per 24 hours per e-mail address, case variants sharing one bucket", async () => {
    const email = newEmail("Thrice");
    for (const variant of [email, email.toUpperCase(), ` ${email.toLowerCase()} `]) {
      expect((await onboard({ email: variant })).status).toBe(200);
    }
    const refused = await onboard({ email: email.toLowerCase() });
    await expectMessage(refused, 429, "too many requests");
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(24 * 60 * 60);
    expect((await onboard({ email: newEmail("other") })).status).toBe(200);
  });

  it("counts an e-mail's onboardings only once the signature holds, so a forged flood spends none", async () => {
    const victim = newEmail("victim");
    for (let i = 0; i < 5; i++) {
      const forged = await request(ONBOARDING_PATH, await signedInit({ email: victim }, { nowMs: clock.now(), secret: "forged" }));
      expect(forged.status).toBe(401);
    }
    for (let i = 0; i < 3; i++) expect((await onboard({ email: victim })).status).toBe(200);
  });
});

describe("POST /api/v2/automations/create/account against the real entry (Deno), mailing through Resend", () => {
  const own = scopedDatabase();
  it("onboards with a signed request and posts the key's e-mail to Resend's HTTP API", async () => {
    const resend = await startResendStub();
    const server = await startServer({
      ...own.serverEnv,
      SIGNING_SECRET: SECRET,
      MAILER: "resend",
      RESEND_API_KEY: "re_test_key",
      RESEND_API_URL: resend.url,
      MAIL_FROM: "Cadence <licenses@example.com>",
    });
    try {
      const email = newEmail("deno");
      const response = await fetch(`${server.url}${ONBOARDING_PATH}`, await signedInit({ email }, { nowMs: Date.now() }));
      expect(response.status).toBe(200);
      const { user_id } = await response.json();
      const [{ key }] = await keysOf(user_id, own.db);
      expect(resend.received).toHaveLength(1);
      const [sent] = resend.received;
      expect(sent.headers.authorization).toBe("Bearer re_test_key");
      expect(sent.body).toMatchObject({ from: "Cadence <licenses@example.com>", to: [email] });
      expect(sent.body.text).toContain(key);
      expect(sent.body.html).toContain(key);
      expect(server.logs()).not.toContain(key);
      expect(server.logs()).not.toContain(SECRET);
    } finally {
      await server.stop();
      await resend.stop();
    }
  });
});

describeDirectOnly("the license key generator", () => {
  it("draws 16 characters of [A-Z0-9] in the spec's pattern, redrawing bytes 252 to 255 so none is favoured", () => {
    const stream = [252, 253, 254, 255, ...Array.from({ length: 40 }, (_, i) => i)];
    expect(generateLicenseKey((size) => Uint8Array.from(stream.splice(0, size)))).toBe("ABCD-EFGH-IJKL-MNOP");
  });

  it("maps byte 251 to the alphabet's last character and 36 back to its first", () => {
    const bytes = [251, 36, ...Array(14).fill(0)];
    expect(generateLicenseKey(() => Uint8Array.from(bytes))).toBe("9AAA-AAAA-AAAA-AAAA");
  });

  it("gives distinct, well-formed keys from the cryptographic generator", () => {
    const keys = Array.from({ length: 1000 }, () => generateLicenseKey());
    expect(keys.every((key) => KEY_PATTERN.test(key))).toBe(true);
    expect(new Set(keys).size).toBe(1000);
  });
});
