import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sendEmailHook } from "../../functions/app/auth-hook/send-email-hook.ts";
import { parseConfig } from "../../functions/app/config.ts";
import type { Database } from "../../functions/app/db/database.ts";
import type { EmailMessage, Mailer } from "../../functions/app/mail/mailer.ts";
import { memoryLogger } from "../support/app.ts";
import { testClock } from "../support/clock.ts";
import { childEnv } from "../support/child-env.ts";
import { HOOK_SECRET, hookPayload, OTHER_SECRET, signedHookInit, SITE_URL } from "../support/auth-hook.ts";
import { scopedDatabase } from "../support/database.ts";
import { startServer } from "../support/server.ts";
import { memoryMailer } from "../support/mailer.ts";

const HOOK_URL = "http://localhost/functions/v1/auth-email-hook";

const database = scopedDatabase();
let db: Database;
const clock = testClock();
let mail = memoryMailer();
let logger = memoryLogger();
let handle: (request: Request) => Promise<Response>;

beforeAll(async () => {
  db = database.db;
});
beforeEach(() => {
  mail = memoryMailer();
  logger = memoryLogger();
  handle = sendEmailHook({ db, mailer: mail.mailer, now: clock.now, log: logger.log }, { secret: HOOK_SECRET });
});

let counter = 0;
/** A recipient no other test uses, so outbox rows never mix. */
const newEmail = (prefix = "hook") => `${prefix}${++counter}@example.com`;

const call = (init: RequestInit) => handle(new Request(HOOK_URL, init));
const send = (payload: unknown, options?: Parameters<typeof signedHookInit>[1]) => call(signedHookInit(payload, options));

const outboxOf = (email: string, on = db) =>
  on.query<{ status: string; subject: string; text_body: string; html_body: string }>(
    "select status, subject, text_body, html_body from public.email_outbox where recipient = $1 order by created_at",
    [email],
  );

async function expectError(response: Response, status: number, message: string | RegExp) {
  expect(response.status).toBe(status);
  const body = await response.json();
  expect(body).toEqual({
    error: { http_code: status, message: typeof message === "string" ? message : expect.stringMatching(message) },
  });
}

/** Auth's verify link for a token hash, with `&` escaped as the HTML body has it. */
const verifyLink = (tokenHash: string, type: string, redirect = "https%3A%2F%2Fkiosk.example.com%2Fwelcome") =>
  `${SITE_URL}/verify?token=${tokenHash}&type=${type}&redirect_to=${redirect}`;
const inHtml = (text: string) => text.replaceAll("&", "&amp;");

describe("POST auth-email-hook: each email_action_type", () => {
  it.each([
    ["signup", "Confirm your Cadence account", "Confirm e-mail address"],
    ["invite", "You are invited to Cadence", "Accept the invitation"],
    ["magiclink", "Your Cadence sign-in link", "Sign in"],
    ["recovery", "Reset your Cadence password", "Choose a new password"],
  ])(
    "renders %s with the verify link and the code, queues it in the outbox, sends it and answers 200 {}",
    async (action, subject, label) => {
      const email = newEmail(action);
      const payload = hookPayload(action, { user: { email } });
      const response = await send(payload);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({});

      const link = verifyLink(payload.email_data.token_hash, action);
      expect(mail.sent).toHaveLength(1);
      const [message] = mail.sent;
      expect(message).toMatchObject({ to: email, subject });
      expect(message.text).toContain("Hello Ada Lovelace,");
      expect(message.text).toContain(`${label}:\n    ${link}`);
      expect(message.text).toContain("Or enter this code:\n    305805");
      expect(message.html).toContain(`<a href="${inHtml(link)}">${label}</a>`);
      expect(message.html).toContain("<strong>305805</strong>");
      expect(await outboxOf(email)).toEqual([{ status: "sent", subject, text_body: message.text, html_body: message.html }]);
    },
  );

  it("renders reauthentication as the code alone, without a link", async () => {
    const email = newEmail("reauth");
    const response = await send(hookPayload("reauthentication", { user: { email }, email_data: { token_hash: "" } }));
    expect(response.status).toBe(200);
    const [message] = mail.sent;
    expect(message).toMatchObject({ to: email, subject: "Your Cadence verification code" });
    expect(message.text).toContain("Your code:\n    305805");
    expect(message.text).not.toContain("verify?");
    expect(message.html).not.toContain("<a ");
  });

  it("sends email_change to both addresses under Secure Email Change, crossing tokens and hashes as Auth documents", async () => {
    const current = newEmail("current");
    const next = newEmail("next");
    const payload = hookPayload("email_change", {
      user: { email: current, new_email: next },
      email_data: {
        token: "111111",
        token_hash: "hash-for-new-address",
        token_new: "222222",
        token_hash_new: "hash-for-current-address",
      },
    });
    expect((await send(payload)).status).toBe(200);
    expect(mail.sent.map((message) => message.to).sort()).toEqual([current, next].sort());

    const toCurrent = mail.sent.find((message) => message.to === current)!;
    expect(toCurrent.subject).toBe("Confirm the change of your Cadence e-mail address");
    expect(toCurrent.text).toContain(`from ${current} to ${next}`);
    expect(toCurrent.text).toContain(verifyLink("hash-for-current-address", "email_change"));
    expect(toCurrent.text).toContain("    111111");

    const toNext = mail.sent.find((message) => message.to === next)!;
    expect(toNext.subject).toBe("Confirm your new Cadence e-mail address");
    expect(toNext.text).toContain(verifyLink("hash-for-new-address", "email_change"));
    expect(toNext.text).toContain("    222222");
    expect(await outboxOf(current)).toHaveLength(1);
    expect(await outboxOf(next)).toHaveLength(1);
  });

  it("sends email_change to the new address only without Secure Email Change", async () => {
    const current = newEmail("current");
    const next = newEmail("next");
    const payload = hookPayload("email_change", {
      user: { email: current, new_email: next },
      email_data: { token: "333333", token_hash: "hash-for-new-address", token_new: "", token_hash_new: "" },
    });
    expect((await send(payload)).status).toBe(200);
    expect(mail.sent.map((message) => message.to)).toEqual([next]);
    expect(mail.sent[0].text).toContain(verifyLink("hash-for-new-address", "email_change"));
    expect(mail.sent[0].text).toContain("    333333");
    expect(await outboxOf(current)).toEqual([]);
  });

  it("escapes the name, the addresses and the link in the HTML body, and greets without a name when there is none", async () => {
    const email = newEmail("escape");
    await send(
      hookPayload("magiclink", {
        user: { email, user_metadata: { name: `<script>alert("x")</script> & "Co"` } },
        email_data: { redirect_to: `https://kiosk.example.com/?a="><b>` },
      }),
    );
    const [message] = mail.sent;
    expect(message.text).toContain(`Hello <script>alert("x")</script> & "Co",`);
    expect(message.html).toContain("Hello &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;Co&quot;,");
    expect(message.html).not.toContain("<script>");
    expect(message.html).not.toContain('"><b>');

    await send(hookPayload("magiclink", { user: { email: newEmail("anonymous"), user_metadata: {} } }));
    expect(mail.sent[1].text.startsWith("Hello,\n")).toBe(true);
  });
});

describe("POST auth-email-hook: one pipeline with the license e-mails", () => {
  it("answers 200 when delivery fails, leaving the e-mail queued with its error for the outbox pass", async () => {
    const email = newEmail("queued");
    mail.failNext();
    const response = await send(hookPayload("recovery", { user: { email } }));
    expect(response.status).toBe(200);
    expect(mail.sent).toEqual([]);
    const [row] = await db.query<{ status: string; last_error: string }>(
      "select status, last_error from public.email_outbox where recipient = $1",
      [email],
    );
    expect(row).toEqual({ status: "pending", last_error: "mail API unavailable (503)" });
  });

  it("answers within the delivery budget while a slow mail API is still sending", async () => {
    let release = () => {};
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const sent: EmailMessage[] = [];
    const slow: Mailer = { send: (message) => stuck.then(() => void sent.push(message)) };
    const hasty = sendEmailHook({ db, mailer: slow, now: clock.now, log: logger.log }, {
      secret: HOOK_SECRET,
      deliveryBudgetMs: 10,
    });
    const email = newEmail("slow");
    const response = await hasty(new Request(HOOK_URL, signedHookInit(hookPayload("magiclink", { user: { email } }))));
    expect(response.status).toBe(200);
    expect(sent).toEqual([]);
    release();
    await expect.poll(() => sent.length).toBe(1);
  });

  it("queues Auth's retry of a call (a new webhook-id, the same body) nothing twice, and answers 200", async () => {
    const email = newEmail("retried");
    const body = JSON.stringify(hookPayload("signup", { user: { email } }));
    expect((await call(signedHookInit(body, { id: "msg_first" }))).status).toBe(200);
    const retry = await call(signedHookInit(body, { id: "msg_second" }));
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual({});
    expect(await outboxOf(email)).toHaveLength(1);
    expect(mail.sent).toHaveLength(1);
  });

  it("logs the Auth user and the action, never the tokens, the link, the address or the secret", async () => {
    const email = newEmail("quiet");
    const payload = hookPayload("magiclink", { user: { email } });
    await send(payload);
    const logged = logger.lines.join("\n");
    expect(logged).toContain("auth_email_queued");
    expect(logged).toContain(payload.user.id);
    for (const secret of [email, payload.email_data.token, payload.email_data.token_hash, HOOK_SECRET, HOOK_SECRET.slice(9)]) {
      expect(logged).not.toContain(secret);
    }
  });
});

describe("POST auth-email-hook: the Standard Webhooks signature", () => {
  const payload = () => hookPayload("magiclink", { user: { email: newEmail("signed") } });

  async function expectRefused(response: Response) {
    await expectError(response, 401, "invalid signature");
    expect(mail.sent).toEqual([]);
  }

  it("refuses a tampered body with 401, and queues nothing", async () => {
    const signed = signedHookInit(payload());
    const attacker = newEmail("attacker");
    await expectRefused(await call({ ...signed, body: signed.body.replace(JSON.parse(signed.body).user.email, attacker) }));
    expect(await outboxOf(attacker)).toEqual([]);
  });

  it("refuses a body signed with another secret with 401", async () => {
    await expectRefused(await send(payload(), { secret: OTHER_SECRET }));
  });

  it("refuses an expired or future timestamp (more than 5 minutes off) with 401, and accepts one 4 minutes old", async () => {
    await expectRefused(await send(payload(), { nowMs: Date.now() - 6 * 60_000 }));
    await expectRefused(await send(payload(), { nowMs: Date.now() + 6 * 60_000 }));
    expect((await send(payload(), { nowMs: Date.now() - 4 * 60_000 })).status).toBe(200);
  });

  it.each(["webhook-id", "webhook-timestamp", "webhook-signature"])("refuses a call without %s with 401", async (header) => {
    const signed = signedHookInit(payload());
    const { [header]: _, ...headers } = signed.headers;
    await expectRefused(await call({ ...signed, headers }));
  });

  it("logs why a call was refused, never the secret", async () => {
    await send(payload(), { secret: OTHER_SECRET });
    const logged = logger.lines.join("\n");
    expect(logged).toContain("auth_email_hook_refused");
    expect(logged).toContain("No matching signature found");
    for (const secret of [HOOK_SECRET, OTHER_SECRET, HOOK_SECRET.slice(9), OTHER_SECRET.slice(9)]) {
      expect(logged).not.toContain(secret);
    }
  });
});

describe("POST auth-email-hook: payloads it refuses (400, nothing queued)", () => {
  async function expectBadRequest(body: unknown, message: string | RegExp) {
    await expectError(await send(body), 400, message);
    expect(mail.sent).toEqual([]);
  }

  it("refuses an unknown email_action_type, naming it and the types it sends", async () => {
    await expectBadRequest(
      hookPayload("password_changed_notification"),
      'unknown email_action_type "password_changed_notification": Cadence sends signup, invite, magiclink, recovery, email_change, reauthentication',
    );
    await expectBadRequest(hookPayload("sms"), /^unknown email_action_type "sms"/);
  });

  it("refuses a body that is not JSON", async () => {
    await expectBadRequest("{not json", "invalid JSON body");
  });

  it("refuses a payload without user or email_data, or without an action type", async () => {
    const { user, email_data } = hookPayload("signup");
    await expectBadRequest({ email_data }, "the payload must be a JSON object with user and email_data");
    await expectBadRequest({ user }, "the payload must be a JSON object with user and email_data");
    await expectBadRequest([], "the payload must be a JSON object with user and email_data");
    await expectBadRequest(
      { user, email_data: { ...email_data, email_action_type: undefined } },
      "email_data.email_action_type: is required",
    );
  });

  it("refuses a user without an e-mail address, or with one that is not", async () => {
    await expectBadRequest(hookPayload("signup", { user: { email: undefined } }), "user.email: must be an e-mail address");
    await expectBadRequest(
      hookPayload("signup", { user: { email: "not-an-address" } }),
      "user.email: must be an e-mail address of at most 254 characters",
    );
  });

  it("refuses a site_url that is not an http(s) URL", async () => {
    await expectBadRequest(
      hookPayload("signup", { email_data: { site_url: "javascript:alert(1)" } }),
      "email_data.site_url: must be an http(s) URL",
    );
  });

  it("refuses a linked e-mail without token_hash, a reauthentication without token, an e-mail change without new_email", async () => {
    await expectBadRequest(
      hookPayload("recovery", { email_data: { token_hash: "" } }),
      "email_data.token_hash: is required for recovery",
    );
    await expectBadRequest(
      hookPayload("reauthentication", { email_data: { token: "" } }),
      "email_data.token: is required for reauthentication",
    );
    await expectBadRequest(hookPayload("email_change"), "user.new_email: is required for email_change");
  });

  it("refuses other methods with 405, and a body over 64 KiB with 413", async () => {
    await expectError(await call({ method: "GET" }), 405, "use POST");
    await expectError(
      await call({ method: "POST", body: "x".repeat(64 * 1024 + 1) }),
      413,
      "request body must not exceed 64 KiB",
    );
  });
});

describe("SEND_EMAIL_HOOK_SECRET", () => {
  it("takes the secret in the dashboard's form, and refuses another form without echoing it", () => {
    expect(parseConfig({ SEND_EMAIL_HOOK_SECRET: HOOK_SECRET }).SEND_EMAIL_HOOK_SECRET).toBe(HOOK_SECRET);
    for (const wrong of [HOOK_SECRET.slice(3), "v1,whsec_tooshort", `v1,whsec_${"!".repeat(40)}`]) {
      expect(() => parseConfig({ SEND_EMAIL_HOOK_SECRET: wrong })).toThrow(
        /SEND_EMAIL_HOOK_SECRET: must be v1,whsec_ followed by the base64 secret/,
      );
      expect(() => parseConfig({ SEND_EMAIL_HOOK_SECRET: wrong })).not.toThrow(wrong);
    }
  });
});

describe("the auth-email-hook edge function (functions/auth-email-hook/index.ts under Deno)", () => {
  const own = scopedDatabase();
  it("verifies a signed magic link call, queues it and prints it through the console mailer", async () => {
    const hook = await startServer(
      { DATABASE_URL: own.url, SEND_EMAIL_HOOK_SECRET: HOOK_SECRET, MAILER: "console" },
      "functions/auth-email-hook/index.ts",
    );
    try {
      const email = newEmail("deno");
      const payload = hookPayload("magiclink", { user: { email } });
      const response = await fetch(`${hook.url}/auth-email-hook`, signedHookInit(payload));
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({});
      expect(hook.logs()).toContain(`--- e-mail to ${email}\nSubject: Your Cadence sign-in link`);
      expect(hook.logs()).toContain(verifyLink(payload.email_data.token_hash, "magiclink"));
      expect(await outboxOf(email, own.db)).toMatchObject([{ status: "sent" }]);
      expect((await fetch(`${hook.url}/auth-email-hook`, signedHookInit(payload, { secret: OTHER_SECRET }))).status).toBe(401);
      expect(hook.logs()).not.toContain(HOOK_SECRET.slice(9));
    } finally {
      await hook.stop();
    }
  });

  it("refuses to start without SEND_EMAIL_HOOK_SECRET, naming it", async () => {
    const deno = new URL("../../node_modules/.bin/deno", import.meta.url).pathname;
    const run = promisify(execFile)(deno, ["run", "-A", "functions/auth-email-hook/index.ts"], {
      cwd: new URL("../../", import.meta.url).pathname,
      env: childEnv({ DATABASE_URL: own.url }),
    });
    await expect(run).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining("SEND_EMAIL_HOOK_SECRET: is required") });
  });
});
