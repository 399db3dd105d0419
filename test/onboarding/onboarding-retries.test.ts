import postgres from "postgres";
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { openPostgres } from "../../functions/app/db/postgres.ts";
import { runScheduledPass } from "../../functions/app/scheduled-pass.ts";
import { DEFAULT_DEADLINE_MS } from "../../functions/app/db/database.ts";
import { claimLeaseSeconds } from "../../functions/app/onboarding/idempotency.ts";
import { standardWebhookVerifier } from "../../functions/app/signatures/standard-webhooks.ts";
import { claimOnboardingKey } from "../../functions/app/onboarding/store.ts";
import { memoryLogger, testApp } from "../support/app.ts";
import { testClock } from "../support/clock.ts";
import { scopedDatabase } from "../support/database.ts";
import { memoryMailer } from "../support/mailer.ts";
import { ONBOARDING_PATH, SECRET, signedInit, standardInit, WEBHOOK_SECRET } from "../support/onboarding.ts";
import { startServer } from "../support/server.ts";

const INVALID = '{"error":"invalid signature"}';
const DAY_MS = 24 * 60 * 60_000;

const database = scopedDatabase();
let db: Database;
const clock = testClock();
const mail = memoryMailer();
let request: ReturnType<typeof testApp>["request"];

beforeAll(async () => {
  db = database.db;
  ({ request } = testApp(db, { now: clock.now, signingSecret: SECRET, standardWebhooksSecret: WEBHOOK_SECRET, mailer: mail.mailer }));
});

let counter = 0;
/** An e-mail no other test uses, so accounts and per-e-mail limits never interfere. */
const newEmail = (prefix = "retry") => `${prefix}${++counter}@example.com`;

/** A signed request under the contract's scheme with an Idempotency-Key: each call a new nonce, as a platform's retry. */
const keyed = async (body: unknown, idempotencyKey: string) =>
  request(ONBOARDING_PATH, await signedInit(body, { nowMs: clock.now(), idempotencyKey }));

/** How many accounts, keys and queued e-mails an address has. */
async function effectsOf(email: string, on: Database = db) {
  const [row] = await on.query<{ accounts: number; keys: number; emails: number }>(
    `select (select count(*)::int from public.accounts where lower(email) = $1) as accounts,
            (select count(*)::int from public.license_keys k join public.accounts a on a.id = k.account_id where lower(a.email) = $1) as keys,
            (select count(*)::int from public.email_outbox where recipient = $1) as emails`,
    [email],
  );
  return row;
}

async function expectMessage(response: Response, status: number, message: string) {
  expect(response.status).toBe(status);
  expect(await response.json()).toEqual({ message });
}

describe("POST /api/v2/automations/create/account with an Idempotency-Key (spec's signature)", () => {
  it("answers a retry with the same key and body with the first answer, byte for byte, creating, sending and counting nothing", async () => {
    const email = newEmail();
    const key = crypto.randomUUID();
    const first = await keyed({ email, name: "Ada" }, key);
    expect(first.status).toBe(200);
    const firstText = await first.text();
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const sentBefore = mail.sent.length;
    for (let retry = 0; retry < 4; retry++) {
      const again = await keyed({ email, name: "Ada" }, key);
      expect(again.status).toBe(200);
      expect(again.headers.get("content-type")).toBe("application/json");
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(await again.text()).toBe(firstText);
    }
    expect(await effectsOf(email)).toEqual({ accounts: 1, keys: 1, emails: 1 });
    expect(mail.sent.length).toBe(sentBefore);
    // The four retries used none of the e-mail's 3 a day: two more onboardings pass, the third is over.
    for (const expected of [200, 200, 429]) expect((await keyed({ email }, crypto.randomUUID())).status).toBe(expected);
  });

  it("answers with the same bytes as an onboarding without a key", async () => {
    const plain = await request(ONBOARDING_PATH, await signedInit({ email: newEmail() }, { nowMs: clock.now() }));
    const withKey = await keyed({ email: newEmail() }, crypto.randomUUID());
    const shape = (text: string) => text.replace(/"user_id":"[0-9a-f-]{36}"/, '"user_id":"<id>"');
    expect(shape(await withKey.text())).toBe(shape(await plain.text()));
  });

  it("refuses the same key with a different body with 422 and a message, changing nothing", async () => {
    const email = newEmail();
    const key = crypto.randomUUID();
    expect((await keyed({ email }, key)).status).toBe(200);
    const other = newEmail();
    await expectMessage(await keyed({ email: other }, key), 422, "this idempotency key was already used with a different request body");
    await expectMessage(await keyed({ email, name: "Changed" }, key), 422, "this idempotency key was already used with a different request body");
    expect(await effectsOf(email)).toEqual({ accounts: 1, keys: 1, emails: 1 });
    expect(await effectsOf(other)).toEqual({ accounts: 0, keys: 0, emails: 0 });
  });

  it("answers 400 for an Idempotency-Key that is empty, over 255 characters or not printable ASCII", async () => {
    const message = "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces";
    for (const key of ["", "k".repeat(256), "two words"]) {
      const email = newEmail();
      await expectMessage(await keyed({ email }, key), 400, message);
      expect(await effectsOf(email)).toEqual({ accounts: 0, keys: 0, emails: 0 });
    }
    expect((await keyed({ email: newEmail() }, "k".repeat(255))).status).toBe(200);
  });

  it("keeps a repeated nonce a 401 even with the same key: a retry is re-signed with a new nonce", async () => {
    const init = await signedInit({ email: newEmail() }, { nowMs: clock.now(), idempotencyKey: crypto.randomUUID() });
    expect((await request(ONBOARDING_PATH, init)).status).toBe(200);
    const replay = await request(ONBOARDING_PATH, init);
    expect(replay.status).toBe(401);
    expect(await replay.text()).toBe(INVALID);
  });

  it("tells a retry that arrives while the first is running to wait what is left of the first's deadline (409, Retry-After of seconds, not a minute), and lets a retry take over once it has run out", async () => {
    const lease = claimLeaseSeconds(DEFAULT_DEADLINE_MS);
    expect(lease).toBe(5);
    const email = newEmail();
    const key = crypto.randomUUID();
    const body = JSON.stringify({ email });
    // The first request, as it stands between its claim and its commit.
    const digest = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body))).toString("hex");
    const claim = await claimOnboardingKey(db, { source: "idempotency-key", id: key }, digest, clock.now(), lease);
    expect(claim.outcome).toBe("claimed");
    const busy = await keyed(body, key);
    await expectMessage(busy, 409, "a request with this idempotency key is still in progress; retry shortly");
    expect(Number(busy.headers.get("retry-after"))).toBe(lease);
    clock.advance(3_000);
    expect(Number((await keyed(body, key)).headers.get("retry-after"))).toBe(lease - 3);
    expect(await effectsOf(email)).toEqual({ accounts: 0, keys: 0, emails: 0 });
    // The first request died: past its lease, the retry carries it out, once.
    clock.advance((lease - 3) * 1000 + 1000);
    const taken = await keyed(body, key);
    expect(taken.status).toBe(200);
    expect(await (await keyed(body, key)).text()).toBe(await taken.text());
    expect(await effectsOf(email)).toEqual({ accounts: 1, keys: 1, emails: 1 });
  });

  it("creates one account, one key and one e-mail for ten simultaneous retries of one key", async () => {
    const email = newEmail();
    const key = crypto.randomUUID();
    const responses = await Promise.all(Array.from({ length: 10 }, () => keyed({ email }, key)));
    const statuses = responses.map((response) => response.status);
    expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(1);
    // Each told to retry shortly does so, and gets the first answer.
    const answers = await Promise.all(responses.map(async (response) => (response.status === 200 ? response.text() : (await keyed({ email }, key)).text())));
    expect(new Set(answers).size).toBe(1);
    expect(await effectsOf(email)).toEqual({ accounts: 1, keys: 1, emails: 1 });
  });

  it("forgets a key after 24 hours: the same key then onboards again", async () => {
    const email = newEmail();
    const key = crypto.randomUUID();
    const { request: later } = testApp(db, { now: () => clock.now() + DAY_MS, signingSecret: SECRET, mailer: memoryMailer().mailer });
    expect((await keyed({ email }, key)).status).toBe(200);
    const again = await later(ONBOARDING_PATH, await signedInit({ email }, { nowMs: clock.now() + DAY_MS, idempotencyKey: key }));
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    expect(await effectsOf(email)).toEqual({ accounts: 1, keys: 2, emails: 2 });
  });
});

describe("POST /api/v2/automations/create/account when the server fails (500)", () => {
  it("uses none of the e-mail's 3 a day: three 500s with Retry-After while the accounts table is locked, then the fourth onboards", async () => {
    // A pool with a short deadline, so each locked-out attempt fails in a fraction of a second.
    const short = openPostgres(database.serverEnv.DATABASE_URL ?? database.serverEnv.SUPABASE_DB_URL, {
      max: 2,
      deadlineMs: 300,
      transactionPooler: Boolean(database.serverEnv.SUPABASE_DB_URL),
    });
    // The fourth attempt, once the lock is gone, goes through the suite's pool (the app's own
    // deadline) in the same app, so the same limiter counts it: through a pooler it may wait for the
    // abandoned attempts to finish (below), longer than 300 ms on a busy machine.
    let through: Database = short;
    const switching: Database = { ...short, query: (text, params, options) => through.query(text, params, options) };
    const staff = postgres(database.url, { max: 1, onnotice: () => {} });
    const log = memoryLogger();
    const { request: slow } = testApp(switching, { now: clock.now, signingSecret: SECRET, mailer: memoryMailer().mailer, log: log.log });
    const email = newEmail("locked");
    let unlock: () => void = () => {};
    const released = new Promise<void>((resolve) => (unlock = resolve));
    let locked: () => void = () => {};
    const holding = new Promise<void>((resolve) => (locked = resolve));
    // A long staff transaction holding the accounts table.
    const transaction = staff.begin(async (sql) => {
      await sql`lock table public.accounts`;
      locked();
      await released;
    });
    try {
      await holding;
      for (let attempt = 0; attempt < 3; attempt++) {
        const failed = await slow(ONBOARDING_PATH, await signedInit({ email }, { nowMs: clock.now() }));
        await expectMessage(failed, 500, "the account could not be created");
        expect(Number(failed.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      }
    } finally {
      unlock();
      await transaction;
      await staff.end();
    }
    // Directly, each failed statement was cancelled by the server (statement_timeout). Through a
    // transaction pooler that setting cannot be sent, and an abandoned statement may still run to its
    // end once the lock is gone (functions/README.md, "When the database fails"): there the rule
    // checked is the allowance alone.
    if (!database.serverEnv.SUPABASE_DB_URL) expect(await effectsOf(email)).toEqual({ accounts: 0, keys: 0, emails: 0 });
    through = db;
    const fourth = await slow(ONBOARDING_PATH, await signedInit({ email }, { nowMs: clock.now() }));
    expect(fourth.status).toBe(200);
    expect(fourth.headers.get("ratelimit-remaining")).toBe("2");
    console.log(`allowance: three 500s (Retry-After) with public.accounts locked, then the fourth: ${fourth.status}, RateLimit-Remaining ${fourth.headers.get("ratelimit-remaining")}`);
    expect(log.lines.join("\n")).not.toContain(email);
    await short.close();
  });

  it("gives the key back after a 500, so a retry with the same key carries the request out at once", async () => {
    const email = newEmail();
    const key = crypto.randomUUID();
    let failOnce = true;
    const failing: Database = {
      ...db,
      query: (text, params) => {
        if (failOnce && text.includes("cadence.onboard_once(")) {
          failOnce = false;
          return Promise.reject(new Error("connection lost"));
        }
        return db.query(text, params);
      },
    };
    const { request: flaky } = testApp(failing, { now: clock.now, signingSecret: SECRET, mailer: memoryMailer().mailer });
    const failed = await flaky(ONBOARDING_PATH, await signedInit({ email }, { nowMs: clock.now(), idempotencyKey: key }));
    await expectMessage(failed, 500, "the account could not be created");
    expect(failed.headers.get("retry-after")).toBe("5");
    const retried = await flaky(ONBOARDING_PATH, await signedInit({ email }, { nowMs: clock.now(), idempotencyKey: key }));
    expect(retried.status).toBe(200);
    expect(retried.headers.get("ratelimit-remaining")).toBe("2");
    expect(await effectsOf(email)).toEqual({ accounts: 1, keys: 1, emails: 1 });
  });
});

describe("POST /api/v2/automations/create/account signed with Standard Webhooks", () => {
  const body = () => JSON.stringify({ email: newEmail("standard") });

  async function expectInvalid(init: RequestInit, via = request) {
    const response = await via(ONBOARDING_PATH, init);
    expect(response.status).toBe(401);
    expect(await response.text()).toBe(INVALID);
  }

  it("passes the Standard Webhooks test vector (secret, msg id, timestamp, body and signature of the reference libraries)", () => {
    const verify = standardWebhookVerifier("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    const headers = new Headers({
      "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
      "webhook-timestamp": "1614265330",
      "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    });
    const payload = new TextEncoder().encode('{"test": 2432232314}');
    expect(verify(headers, payload, 1614265330_000)).toBe("msg_p5jXN8AQM9LWM0D4loKWxJek");
    expect(verify(headers, new TextEncoder().encode('{"test": 2432232315}'), 1614265330_000)).toBeUndefined();
    headers.set("webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OF=");
    expect(verify(headers, payload, 1614265330_000)).toBeUndefined();
  });

  it("accepts a request signed by the standardwebhooks package", async () => {
    const email = newEmail("standard");
    const response = await request(ONBOARDING_PATH, standardInit({ email }, { nowMs: clock.now() }));
    expect(response.status).toBe(200);
    expect(await effectsOf(email)).toEqual({ accounts: 1, keys: 1, emails: 1 });
  });

  it("answers a repeated webhook-id with the first answer, never a second account", async () => {
    const email = newEmail("standard");
    const id = `msg_${crypto.randomUUID()}`;
    const first = await request(ONBOARDING_PATH, standardInit({ email }, { nowMs: clock.now(), id }));
    const firstText = await first.text();
    // The same message sent again, and re-signed with a later timestamp, as platforms retry.
    for (const init of [standardInit({ email }, { nowMs: clock.now(), id }), standardInit({ email }, { nowMs: clock.now() + 30_000, id })]) {
      const again = await request(ONBOARDING_PATH, init);
      expect(again.status).toBe(first.status);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(await again.text()).toBe(firstText);
    }
    expect(await effectsOf(email)).toEqual({ accounts: 1, keys: 1, emails: 1 });
    await expectMessage(
      await request(ONBOARDING_PATH, standardInit({ email: newEmail() }, { nowMs: clock.now(), id })),
      422,
      "this idempotency key was already used with a different request body",
    );
  });

  it("refuses a tampered body, a tampered signature, another secret or a missing header with the same 401", async () => {
    const raw = body();
    const signed = standardInit(raw, { nowMs: clock.now() });
    const headers = signed.headers as Record<string, string>;
    await expectInvalid({ ...signed, body: raw.replace("standard", "Standard") });
    const flipped = headers["webhook-signature"].replace(/^v1,(.)/, (_, first: string) => `v1,${first === "A" ? "B" : "A"}`);
    await expectInvalid({ ...signed, headers: { ...headers, "webhook-signature": flipped } });
    await expectInvalid({ ...signed, headers: { ...headers, "webhook-signature": headers["webhook-signature"].replace("v1,", "v2,") } });
    await expectInvalid({ ...signed, headers: { ...headers, "webhook-id": "msg_other" } });
    await expectInvalid(standardInit(raw, { nowMs: clock.now(), secret: "whsec_b3RoZXItd2ViaG9vay1zZWNyZXQtMDEyMzQ1Njc=" }));
    for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
      const without = { ...headers };
      delete without[name];
      await expectInvalid({ ...signed, headers: without });
    }
  });

  it("accepts one valid v1 entry among several, as during a rotation of the sender's secret", async () => {
    const raw = body();
    const current = standardInit(raw, { nowMs: clock.now(), id: "msg_rotation" }).headers as Record<string, string>;
    const old = standardInit(raw, { nowMs: clock.now(), id: "msg_rotation", secret: "whsec_b3RoZXItd2ViaG9vay1zZWNyZXQtMDEyMzQ1Njc=" }).headers as Record<string, string>;
    const response = await request(ONBOARDING_PATH, {
      method: "POST",
      headers: { ...current, "webhook-signature": `${old["webhook-signature"]} ${current["webhook-signature"]}` },
      body: raw,
    });
    expect(response.status).toBe(200);
  });

  it("accepts a timestamp 300 seconds old or ahead, and refuses one 301 seconds either way", async () => {
    for (const skew of [-300, 300]) {
      expect((await request(ONBOARDING_PATH, standardInit(body(), { nowMs: clock.now() + skew * 1000 }))).status).toBe(200);
    }
    for (const skew of [-301, 301]) await expectInvalid(standardInit(body(), { nowMs: clock.now() + skew * 1000 }));
  });

  it("refuses a request carrying headers of both schemes, each correctly signed, with the same 401", async () => {
    const raw = body();
    const spec = await signedInit(raw, { nowMs: clock.now() });
    const standard = standardInit(raw, { nowMs: clock.now() });
    await expectInvalid({ method: "POST", headers: { ...(spec.headers as Record<string, string>), ...(standard.headers as Record<string, string>) }, body: raw });
    // Neither scheme's signature was used up: each alone still passes.
    expect((await request(ONBOARDING_PATH, spec)).status).toBe(200);
  });

  it("refuses every Standard Webhooks request without STANDARD_WEBHOOKS_SECRET", async () => {
    const { request: unset } = testApp(db, { now: clock.now, signingSecret: SECRET, mailer: memoryMailer().mailer });
    await expectInvalid(standardInit(body(), { nowMs: clock.now() }), unset);
  });

  it("counts against the same limits: the fourth onboarding of one e-mail in a day is 429", async () => {
    const email = newEmail("standard");
    for (let i = 0; i < 3; i++) expect((await request(ONBOARDING_PATH, standardInit({ email }, { nowMs: clock.now() }))).status).toBe(200);
    await expectMessage(await request(ONBOARDING_PATH, standardInit({ email }, { nowMs: clock.now() })), 429, "too many requests");
  });
});

describe("the scheduled run (scheduled-pass.ts) and expired onboarding ids", () => {
  it("deletes the ids past their 24 hours and keeps the others", async () => {
    const expired = crypto.randomUUID();
    const kept = crypto.randomUUID();
    expect((await keyed({ email: newEmail() }, expired)).status).toBe(200);
    clock.advance(60_000);
    expect((await keyed({ email: newEmail() }, kept)).status).toBe(200);
    const ids = () =>
      db.query<{ id: string }>("select id from public.onboarding_idempotency_keys where id = any($1::text[]) order by id", [[expired, kept]]);
    const report = await runScheduledPass({ db, mailer: memoryMailer().mailer, now: () => clock.now() - 60_000 + DAY_MS, log: memoryLogger().log });
    expect(report.idempotencyKeysPurged).toBeGreaterThanOrEqual(1);
    expect((await ids()).map((row) => row.id)).toEqual([kept]);
  });
});

describe("POST /api/v2/automations/create/account with one id in both schemes", () => {
  // Each scheme keys its own records (public.onboarding_idempotency_keys' key is (source, id)): an
  // id chosen by one sender never answers for the other's requests.
  it("never replays a webhook-id's answer to an Idempotency-Key of the same id, nor the reverse", async () => {
    for (const first of ["webhook-id", "idempotency-key"] as const) {
      const email = newEmail(`namespace-${first}`);
      const id = `msg_${crypto.randomUUID()}`;
      const standard = () => request(ONBOARDING_PATH, standardInit({ email }, { nowMs: clock.now(), id }));
      const contract = () => keyed({ email }, id);
      const [one, other] = first === "webhook-id" ? [standard, contract] : [contract, standard];
      expect((await one()).status).toBe(200);
      const second = await other();
      expect(second.status).toBe(200);
      expect(second.headers.get("idempotent-replayed")).toBeNull();
      expect(await effectsOf(email)).toEqual({ accounts: 1, keys: 2, emails: 2 });
    }
  });

  it("never refuses an id as reused with another body because the other scheme used it", async () => {
    const id = `msg_${crypto.randomUUID()}`;
    expect((await request(ONBOARDING_PATH, standardInit({ email: newEmail("namespace") }, { nowMs: clock.now(), id }))).status).toBe(200);
    const other = await keyed({ email: newEmail("namespace") }, id);
    expect(other.status).toBe(200);
    expect(other.headers.get("idempotent-replayed")).toBeNull();
  });
});

describe("POST /api/v2/automations/create/account on two real entries (Deno) sharing one database", () => {
  const own = scopedDatabase();
  it("creates exactly one account, one key and one e-mail for ten concurrent retries of one id across both", async () => {
    const env = { ...own.serverEnv, SIGNING_SECRET: SECRET, STANDARD_WEBHOOKS_SECRET: WEBHOOK_SECRET, CLIENT_IP_HEADER: "x-forwarded-for" };
    // One after the other: each checks the migrations at start, and two at once race on the catalog.
    const servers = [await startServer(env)];
    servers.push(await startServer(env));
    try {
      for (const scheme of ["idempotency-key", "webhook-id"] as const) {
        const email = newEmail(`two-${scheme}`);
        const id = crypto.randomUUID();
        const send = async (i: number) => {
          const init =
            scheme === "idempotency-key"
              ? await signedInit({ email }, { nowMs: Date.now(), idempotencyKey: id, ip: `198.51.100.${i}` })
              : standardInit({ email }, { nowMs: Date.now(), id, ip: `198.51.100.${i}` });
          return fetch(servers[i % 2].url + ONBOARDING_PATH, init);
        };
        const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => send(i)));
        const statuses = responses.map((response) => response.status);
        console.log(`two entries, ${scheme}: statuses ${statuses.join(",")}`);
        expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
        const answers = await Promise.all(
          responses.map(async (response, i) => (response.status === 200 ? response.text() : (await send(i + 10)).text())),
        );
        expect([...new Set(answers)]).toEqual([answers[0]]);
        const effects = await effectsOf(email, own.db);
        console.log(`two entries, ${scheme}: ${effects.accounts} account, ${effects.keys} key, ${effects.emails} e-mail`);
        expect(effects).toEqual({ accounts: 1, keys: 1, emails: 1 });
      }
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
    }
  });
});
