import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { consoleMailer } from "../../functions/app/mail/console-mailer.ts";
import { licenseEmail } from "../../functions/app/mail/license-email.ts";
import type { EmailMessage, Mailer } from "../../functions/app/mail/mailer.ts";
import { retryDelayMs } from "../../functions/app/backoff.ts";
import { deliverEmail, deliverPending, OUTBOX_LEASE_SECONDS } from "../../functions/app/mail/outbox.ts";
import { resendMailer } from "../../functions/app/mail/resend-mailer.ts";
import { openPostgres } from "../../functions/app/db/postgres.ts";
import { parseConfig } from "../../functions/app/config.ts";
import { openRuntime } from "../../functions/app/runtime.ts";
import { memoryLogger } from "../support/app.ts";
import { testClock } from "../support/clock.ts";
import { childEnv } from "../support/child-env.ts";
import { scopedDatabase } from "../support/database.ts";
import { memoryMailer } from "../support/mailer.ts";
import { startResendStub } from "../support/resend-stub.ts";

const database = scopedDatabase();
let db: Database;

beforeAll(async () => {
  db = database.db;
});

let counter = 0;
const newRecipient = () => `outbox${++counter}@example.com`;
const message = (to: string): EmailMessage => licenseEmail({ to, name: "Ada", key: "ABCD-EFGH-JKLM-NPQR" });

async function enqueue(to: string, nowMs: number, on = db): Promise<string> {
  const { subject, text, html } = message(to);
  const [row] = await on.query<{ id: string }>(
    "select cadence.enqueue_email($1, $2, $3, $4, $5::timestamptz) as id",
    [to, subject, text, html, new Date(nowMs).toISOString()],
  );
  return row.id;
}

const rowOf = async (id: string, on = db) =>
  (await on.query<{ status: string; attempts: number; last_error: string | null; next_attempt_at: Date; sent_at: Date | null }>(
    "select status, attempts, last_error, next_attempt_at, sent_at from public.email_outbox where id = $1",
    [id],
  ))[0];

/** The events' delivery in a run with no event endpoint configured. */
const NO_EVENTS = { messages: 0, events: 0, failed: 0, disabled: 0 };

/** Marks every pending row sent, so each test sees only the rows it queues. */
const drain = () => db.query("update public.email_outbox set status = 'sent', sent_at = now() where status = 'pending'");

describe("the license e-mail", () => {
  it("carries the key and the e-mail address in both bodies, and escapes the name in HTML", () => {
    const email = licenseEmail({ to: "ada@example.com", name: `Ada "<script>" O'Neil & co`, key: "ABCD-EFGH-JKLM-NPQR" });
    for (const body of [email.text, email.html]) {
      expect(body).toContain("ABCD-EFGH-JKLM-NPQR");
      expect(body).toContain("ada@example.com");
    }
    expect(email.text).toContain(`Hello Ada "<script>" O'Neil & co,`);
    expect(email.html).toContain("Hello Ada &quot;&lt;script&gt;&quot; O&#39;Neil &amp; co,");
    expect(email.html).not.toContain("<script>");
  });
});

describe("the console mailer", () => {
  it("prints the recipient, the subject and the text body", async () => {
    const printed: string[] = [];
    await consoleMailer((text) => printed.push(text)).send(message("ada@example.com"));
    expect(printed).toHaveLength(1);
    expect(printed[0]).toContain("ada@example.com");
    expect(printed[0]).toContain("Subject: Your Cadence license key");
    expect(printed[0]).toContain("ABCD-EFGH-JKLM-NPQR");
  });
});

describe("the resend mailer, against a local stub of Resend's HTTP API", () => {
  let resend: Awaited<ReturnType<typeof startResendStub>>;
  let mailer: Mailer;
  beforeAll(async () => {
    resend = await startResendStub();
    mailer = resendMailer({ apiKey: "re_123", from: "Cadence <licenses@example.com>", url: resend.url });
  });
  afterAll(() => resend.stop());

  it("posts the e-mail as JSON with the API key as a bearer token and the idempotency key", async () => {
    await mailer.send({ ...message("ada@example.com"), idempotencyKey: "cadence-email/1" });
    const [sent] = resend.received.splice(0);
    expect(sent.method).toBe("POST");
    expect(sent.path).toBe("/emails");
    expect(sent.headers.authorization).toBe("Bearer re_123");
    expect(sent.headers["content-type"]).toBe("application/json");
    expect(sent.headers["idempotency-key"]).toBe("cadence-email/1");
    const { subject, text, html } = message("ada@example.com");
    expect(sent.body).toEqual({ from: "Cadence <licenses@example.com>", to: ["ada@example.com"], subject, text, html });
  });

  it("throws, with Resend's status, when Resend answers other than 2xx", async () => {
    resend.failWith(422);
    await expect(mailer.send(message("ada@example.com"))).rejects.toThrow(/resend answered 422/);
    expect(resend.received).toHaveLength(0);
  });
});

describe("retry backoff", () => {
  it("waits one minute after the first failure, doubles each time, and never more than six hours", () => {
    expect([1, 2, 3, 4].map(retryDelayMs)).toEqual([60_000, 120_000, 240_000, 480_000]);
    expect(retryDelayMs(9)).toBe(256 * 60_000);
    expect(retryDelayMs(10)).toBe(6 * 60 * 60_000);
    expect(retryDelayMs(50)).toBe(6 * 60 * 60_000);
  });
});

describe("the outbox", () => {
  it("delivers a queued e-mail once and records it sent", async () => {
    await drain();
    const clock = testClock();
    const mail = memoryMailer();
    const ports = { db, mailer: mail.mailer, now: clock.now, log: memoryLogger().log };
    const to = newRecipient();
    const id = await enqueue(to, clock.now());
    expect(await deliverEmail(ports, id)).toBe("sent");
    expect(await deliverEmail(ports, id)).toBe("not_due");
    expect(mail.sent.map((sent) => sent.to)).toEqual([to]);
    expect(mail.sent[0].idempotencyKey).toBe(`cadence-email/${id}`);
    expect(await rowOf(id)).toMatchObject({ status: "sent", attempts: 1, sent_at: new Date(clock.now()) });
  });

  it("leaves a row the mailer failed pending with its error, and the retry after the backoff delivers it", async () => {
    await drain();
    const clock = testClock();
    const mail = memoryMailer();
    const log = memoryLogger();
    const ports = { db, mailer: mail.mailer, now: clock.now, log: log.log };
    const id = await enqueue(newRecipient(), clock.now());
    mail.failNext();
    expect(await deliverEmail(ports, id)).toBe("failed");
    expect(await rowOf(id)).toMatchObject({
      status: "pending",
      attempts: 1,
      last_error: "mail API unavailable (503)",
      next_attempt_at: new Date(clock.now() + 60_000),
    });
    expect(log.lines.join("\n")).not.toContain("ABCD-EFGH-JKLM-NPQR");

    clock.advance(59_000);
    expect(await deliverPending(ports)).toEqual({ sent: 0, failed: 0 });
    clock.advance(1_000);
    expect(await deliverPending(ports)).toEqual({ sent: 1, failed: 0 });
    expect(await rowOf(id)).toMatchObject({ status: "sent", attempts: 2, last_error: "mail API unavailable (503)" });
    expect(mail.sent).toHaveLength(1);
  });

  it("backs off further after each failure", async () => {
    await drain();
    const clock = testClock();
    const mail = memoryMailer();
    const ports = { db, mailer: mail.mailer, now: clock.now, log: memoryLogger().log };
    const id = await enqueue(newRecipient(), clock.now());
    mail.failNext(2);
    expect(await deliverPending(ports)).toEqual({ sent: 0, failed: 1 });
    clock.advance(60_000);
    expect(await deliverPending(ports)).toEqual({ sent: 0, failed: 1 });
    expect((await rowOf(id)).next_attempt_at).toEqual(new Date(clock.now() + 120_000));
    clock.advance(120_000);
    expect(await deliverPending(ports)).toEqual({ sent: 1, failed: 0 });
  });

  it("gives a row whose worker died mid-send back to the queue when its lease ends", async () => {
    await drain();
    const clock = testClock();
    const mail = memoryMailer();
    const ports = { db, mailer: mail.mailer, now: clock.now, log: memoryLogger().log };
    const id = await enqueue(newRecipient(), clock.now());
    const claimed = await db.query("select id from cadence.claim_emails($1::timestamptz, $2, 10)", [
      new Date(clock.now()).toISOString(),
      OUTBOX_LEASE_SECONDS,
    ]);
    expect(claimed).toEqual([{ id }]);
    expect(await deliverPending(ports)).toEqual({ sent: 0, failed: 0 });
    clock.advance(OUTBOX_LEASE_SECONDS * 1000);
    expect(await deliverPending(ports)).toEqual({ sent: 1, failed: 0 });
    expect(await rowOf(id)).toMatchObject({ status: "sent", attempts: 2 });
  });

  it("leaves an onboarding's e-mail to the request that queued it, and to the sweeps a minute later if that request died", async () => {
    await drain();
    const clock = testClock();
    const mail = memoryMailer();
    const ports = { db, mailer: mail.mailer, now: clock.now, log: memoryLogger().log };
    const onboard = async (n: number) => {
      const to = newRecipient();
      const { subject, text, html } = message(to);
      const [row] = await db.query<{ outbox_id: string }>(
        "select outbox_id from cadence.onboard($1, 'Ada', $2, $3, $4, $5, $6::timestamptz)",
        [to, `FRST-SEND-0000-000${n}`, subject, text, html, new Date(clock.now()).toISOString()],
      );
      return { to, id: row.outbox_id };
    };

    // A sweep between the onboarding's commit and its own send takes nothing; the request sends it.
    const answered = await onboard(1);
    expect(await deliverPending(ports)).toEqual({ sent: 0, failed: 0 });
    expect(await deliverEmail(ports, answered.id)).toBe("sent");
    expect(await rowOf(answered.id)).toMatchObject({ status: "sent", attempts: 1 });

    // The request died before its send: the row is the sweeps' one minute after it was queued.
    const orphaned = await onboard(2);
    clock.advance(59_000);
    expect(await deliverPending(ports)).toEqual({ sent: 0, failed: 0 });
    clock.advance(1_000);
    expect(await deliverPending(ports)).toEqual({ sent: 1, failed: 0 });
    expect(mail.sent.map((email) => email.to)).toEqual([answered.to, orphaned.to]);
  });

  it("never sends one e-mail twice when two workers deliver at once", async () => {
    await drain();
    const clock = testClock();
    const recipients = Array.from({ length: 30 }, newRecipient);
    for (const to of recipients) await enqueue(to, clock.now());
    const sent: string[] = [];
    // A slow mailer keeps each claim open long enough for the workers to contend for the rows.
    const slow: Mailer = {
      async send(email) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        sent.push(email.to);
      },
    };
    const pools = [openPostgres(database.url, { max: 2 }), openPostgres(database.url, { max: 2 })];
    try {
      const reports = await Promise.all(
        pools.map((pool) => deliverPending({ db: pool, mailer: slow, now: clock.now, log: memoryLogger().log })),
      );
      expect(reports.every((report) => report.sent > 0)).toBe(true);
      expect(reports[0].sent + reports[1].sent).toBe(30);
    } finally {
      await Promise.all(pools.map((pool) => pool.close()));
    }
    expect(sent.sort()).toEqual([...recipients].sort());
  });

  it("claims due e-mails through the outbox's due index and an e-mail by id through its key, never reading every pending row", async () => {
    await drain();
    const clock = testClock();
    const id = await enqueue(newRecipient(), clock.now());
    // auto_explain (contrib) sends the plan of each statement inside the function as a LOG message.
    const plans: string[] = [];
    const client = postgres(database.url, { max: 1, onnotice: (notice) => void plans.push(String(notice.message)) });
    try {
      await client.begin(async (tx) => {
        await tx.unsafe("load 'auto_explain'");
        // A test outbox is small enough to read whole; each claim must still be able to use its index.
        await tx.unsafe("set local enable_seqscan = off; set local auto_explain.log_min_duration = 0; set local auto_explain.log_nested_statements = on; set local client_min_messages = log");
        const now = new Date(clock.now()).toISOString();
        await tx.unsafe("select id from cadence.claim_emails($1::timestamptz, 300, 1, null)", [now]);
        await tx.unsafe("select id from cadence.claim_emails($1::timestamptz, 300, 1, $2::uuid)", [now, id]);
      });
    } finally {
      await client.end();
    }
    const log = plans.join("\n");
    expect(log).toMatch(/using email_outbox_due_idx on email_outbox d[^\n]*\n\s*Index Cond: \(next_attempt_at <= /);
    expect(log).toMatch(/using email_outbox_pkey on email_outbox d[^\n]*\n\s*Index Cond: \(id = /);
  });
});

const root = new URL("../../", import.meta.url).pathname;
const deno = `${root}node_modules/.bin/deno`;

describe("npm run outbox:deliver (functions/cli/deliver-outbox.ts)", () => {
  const own = scopedDatabase();
  it("delivers the due e-mails once and prints how many were sent and failed", async () => {
    const resend = await startResendStub();
    try {
      const to = newRecipient();
      const id = await enqueue(to, Date.now(), own.db);
      const { stdout } = await promisify(execFile)(deno, ["run", "-A", "functions/cli/deliver-outbox.ts"], {
        cwd: root,
        env: childEnv({ DATABASE_URL: own.url, MAILER: "resend", RESEND_API_KEY: "re_cli", RESEND_API_URL: resend.url }),
      });
      // The offline-alert pass, the seat checks and the events' delivery run first in the same run (no
      // kiosk here: Cadence sees none, so it alerts nobody and flags nothing; no event endpoint).
      expect(JSON.parse(stdout.trim().split("\n").at(-1)!)).toEqual({
        sent: 1, failed: 0, alerts: expect.objectContaining({ blind: true, emails: 0 }), seats: { flagged: 0, digest: false }, events: NO_EVENTS,
      });
      expect(resend.received.map((sent) => sent.body.to)).toEqual([[to]]);
      expect((await rowOf(id, own.db)).status).toBe("sent");
    } finally {
      await resend.stop();
    }
  });

  it("refuses to run without a database URL: the local default database belongs to the server that started it", async () => {
    const run = promisify(execFile)(deno, ["run", "-A", "functions/cli/deliver-outbox.ts"], { cwd: root, env: childEnv() });
    await expect(run).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining("DATABASE_URL: is required") });
  });
});

describe("the outbox edge function (functions/outbox/index.ts)", () => {
  const own = scopedDatabase();
  it("delivers the due e-mails on each POST, as pg_cron calls it, and refuses other methods", async () => {
    const resend = await startResendStub();
    const child = spawn(deno, ["run", "-A", "functions/outbox/index.ts"], {
      cwd: root,
      env: childEnv({ PORT: "0", SUPABASE_DB_URL: own.url, MAILER: "resend", RESEND_API_KEY: "re_fn", RESEND_API_URL: resend.url }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let output = "";
        child.stdout.on("data", (chunk) => {
          output += chunk;
          const match = /"event":"listening","port":(\d+)/.exec(output);
          if (match) resolve(Number(match[1]));
        });
        child.stderr.on("data", (chunk) => (output += chunk));
        child.once("exit", (code) => reject(new Error(`outbox function exited with ${code}:\n${output}`)));
      });
      const to = newRecipient();
      await enqueue(to, Date.now(), own.db);
      const url = `http://127.0.0.1:${port}/outbox`;
      // Each call runs the offline-alert pass first (no kiosk here: it alerts nobody), then delivers.
      const seats = { flagged: 0, digest: false };
      const events = NO_EVENTS;
      expect(await (await fetch(url, { method: "POST" })).json()).toEqual({ sent: 1, failed: 0, alerts: expect.objectContaining({ emails: 0 }), seats, events });
      expect(await (await fetch(url, { method: "POST" })).json()).toEqual({ sent: 0, failed: 0, alerts: expect.objectContaining({ emails: 0 }), seats, events });
      expect((await fetch(url)).status).toBe(405);
      expect(resend.received.map((sent) => sent.body.to)).toEqual([[to]]);
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
      await resend.stop();
    }
  });
});

describe("the minute sweep of a self-hosted server (functions/app/runtime.ts)", () => {
  const own = scopedDatabase();
  it("finishes the e-mail under way before a stop closes the database, records it sent, and leaves the next to the next pass", async () => {
    await own.db.query("update public.email_outbox set status = 'sent', sent_at = now() where status = 'pending'");
    const id = await enqueue(newRecipient(), Date.now() - 60_000, own.db);
    const next = await enqueue(newRecipient(), Date.now(), own.db);
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let arrived = () => {};
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    const resend = await startResendStub({ heldUntil: held, onArrival: () => arrived() });
    const { log, lines } = memoryLogger();
    try {
      const config = parseConfig({ DATABASE_URL: own.url, MAILER: "resend", RESEND_API_KEY: "re_stop", RESEND_API_URL: resend.url });
      const runtime = await openRuntime(config, log);
      // The start's sweep is sending it, and the stub holds its answer.
      await arrival;
      let closed = false;
      const closing = runtime.close().then(() => (closed = true));
      // Answered once the stop waits for the sweep, or once the stop is over without waiting.
      await vi.waitFor(() => {
        if (!closed && !lines.some((line) => line.includes('"event":"scheduled_pass_awaited"'))) throw new Error("the stop neither waits nor is over");
      }, { timeout: 120_000, interval: 10 });
      release();
      await closing;
      expect(resend.received).toHaveLength(1);
      expect((await rowOf(id, own.db)).status).toBe("sent");
      expect(await rowOf(next, own.db)).toMatchObject({ status: "pending", attempts: 0 });
      expect(lines.filter((line) => line.includes("database_unavailable"))).toEqual([]);
    } finally {
      release();
      await resend.stop();
    }
  });
});
