import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FULL_KEY_IN_TEXT, ONBOARDING_PATH, SECRET, signedInit, standardInit, WEBHOOK_SECRET } from "../support/onboarding.ts";
import { scopedDatabase } from "../support/database.ts";
import { startResendStub } from "../support/resend-stub.ts";
import { startServer, type RunningServer } from "../support/server.ts";

const BURST = 40;

describe("POST /api/v2/automations/create/account when the server is killed mid-burst", () => {
  const database = scopedDatabase();
  let resend: Awaited<ReturnType<typeof startResendStub>>;
  let server: RunningServer | undefined;

  beforeAll(async () => {
    // Slow deliveries, so the kill catches e-mails in flight as well as onboardings.
    resend = await startResendStub({ delayMs: 150 });
  });
  afterAll(async () => {
    await server?.stop();
    await resend?.stop();
  });

  const env = () => ({
    DATABASE_URL: database.url,
    SIGNING_SECRET: SECRET,
    TRUST_PROXY: "true",
    MAILER: "resend",
    RESEND_API_KEY: "re_test",
    RESEND_API_URL: resend.url,
  });

  it("loses no answered key and no key's e-mail, half-writes nothing, and sends what was pending after a restart", async () => {
    server = await startServer(env());
    const emails = Array.from({ length: BURST }, (_, i) => `crash-${i}@example.com`);
    let answeredSoFar = 0;
    let killNow: () => void = () => {};
    const enoughAnswered = new Promise<void>((resolve) => (killNow = resolve));
    const answers = emails.map(async (email, i) => {
      const init = await signedInit({ email }, { nowMs: Date.now(), ip: `203.0.113.${i}` });
      try {
        const response = await fetch(server!.url + ONBOARDING_PATH, init);
        const body = await response.json();
        if (response.status === 200 && ++answeredSoFar === 5) killNow();
        return { email, status: response.status, body };
      } catch {
        return { email, status: 0, body: null };
      }
    });
    // Kill once five onboardings are answered: the rest are in flight.
    await Promise.race([enoughAnswered, Promise.all(answers)]);
    await server.kill();
    const killedLogs = server.logs();
    const settled = await Promise.all(answers);
    const answered = settled.filter((answer) => answer.status === 200);
    expect(answered.length).toBeGreaterThan(0);
    console.log(`crash: ${answered.length} of ${BURST} onboardings answered 200 before SIGKILL`);

    // Every 200 has its account and at least one key; every key of these accounts has its e-mail.
    for (const { email, body } of answered) {
      const [account] = await database.db.query<{ id: string; keys: number }>(
        `select a.id, (select count(*)::int from public.license_keys k where k.account_id = a.id) as keys
         from public.accounts a where lower(a.email) = $1`,
        [email],
      );
      expect(account).toEqual({ id: body.user_id, keys: 1 });
    }
    const orphans = await database.db.query(`
      select a.email from public.accounts a
      where a.email like 'crash-%'
        and (not exists (select from public.license_keys k where k.account_id = a.id)
             or exists (select from public.license_keys k where k.account_id = a.id
                        and not exists (select from public.email_outbox o where o.text_body like '%' || k.key || '%'
                                          and o.html_body like '%' || k.key || '%' and o.recipient = a.email)))`);
    expect(orphans).toEqual([]);

    // An e-mail the dead process had claimed comes back when its five-minute lease ends: end the
    // lease by hand rather than wait. A restart then sends everything pending.
    await database.db.query(`update public.email_outbox set next_attempt_at = now() where status = 'pending'`);
    const beforeRestart = await database.db.query(`select id from public.email_outbox where status = 'pending'`);
    console.log(`crash: ${beforeRestart.length} e-mails pending at restart`);
    server = await startServer(env());
    const deadline = Date.now() + 60_000;
    let pending: unknown[] = beforeRestart;
    while (pending.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      pending = await database.db.query(`select id from public.email_outbox where status <> 'sent'`);
    }
    expect(pending).toEqual([]);
    // What both processes logged holds no secret, no full key and nothing of the onboarding bodies.
    for (const logs of [killedLogs, server.logs()]) {
      expect(logs).not.toContain(SECRET);
      expect(logs).not.toMatch(FULL_KEY_IN_TEXT);
      expect(logs).not.toContain("crash-");
    }
    const keys = await database.db.query<{ key: string }>(
      `select k.key from public.license_keys k join public.accounts a on a.id = k.account_id where a.email like 'crash-%'`,
    );
    for (const { key } of keys) {
      expect(resend.received.some((mail) => mail.body.text.includes(key))).toBe(true);
    }
  });
});

describe("POST /api/v2/automations/create/account with an id, when the server is killed between the key and the answer", () => {
  const database = scopedDatabase();
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  it("answers the retry after a restart with the first answer: one account, one key, one e-mail", async () => {
    // The answer goes out after the e-mail's first send: a mail API that holds the send keeps the
    // request between its commit and its answer, where the kill lands.
    let arrived: () => void = () => {};
    const held = await startResendStub({ delayMs: 600_000, onArrival: () => arrived() });
    const env = (resendUrl: string) => ({
      DATABASE_URL: database.url,
      SIGNING_SECRET: SECRET,
      STANDARD_WEBHOOKS_SECRET: WEBHOOK_SECRET,
      TRUST_PROXY: "true",
      MAILER: "resend",
      RESEND_API_KEY: "re_test",
      RESEND_API_URL: resendUrl,
    });
    for (const scheme of ["idempotency-key", "webhook-id"] as const) {
      const email = `crash-between-${scheme}@example.com`;
      const id = crypto.randomUUID();
      const init = async (ip: string) =>
        scheme === "idempotency-key"
          ? signedInit({ email }, { nowMs: Date.now(), idempotencyKey: id, ip })
          : standardInit({ email }, { nowMs: Date.now(), id, ip });
      const sending = new Promise<void>((resolve) => (arrived = resolve));
      server = await startServer(env(held.url));
      const lost = fetch(server.url + ONBOARDING_PATH, await init("203.0.113.200")).then((response) => response.status, () => 0);
      await Promise.race([sending, lost]);
      await server.kill();
      expect(await lost).toBe(0);

      const resend = await startResendStub();
      server = await startServer(env(resend.url));
      try {
        const retry = await fetch(server.url + ONBOARDING_PATH, await init("203.0.113.201"));
        expect(retry.status).toBe(200);
        expect(retry.headers.get("idempotent-replayed")).toBe("true");
        const { user_id } = await retry.json();
        const [effects] = await database.db.query<{ accounts: number; keys: number; emails: number; account: string }>(
          `select (select count(*)::int from public.accounts where email = $1) as accounts,
                  (select min(id::text) from public.accounts where email = $1) as account,
                  (select count(*)::int from public.license_keys where email = $1) as keys,
                  (select count(*)::int from public.email_outbox where recipient = $1) as emails`,
          [email],
        );
        console.log(`crash between key and answer, ${scheme}: retry ${retry.status}, ${effects.accounts} account, ${effects.keys} key, ${effects.emails} e-mail`);
        expect(effects).toEqual({ accounts: 1, account: user_id, keys: 1, emails: 1 });
      } finally {
        await server.stop();
        server = undefined;
        await resend.stop();
      }
    }
    await held.stop();
  });
});
