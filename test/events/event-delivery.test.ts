import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { EVENT_RETRY_WINDOW_MS, eventRetryDelayMs } from "../../functions/app/backoff.ts";
import type { Database } from "../../functions/app/db/database.ts";
import { deliverEvents, type EventDeliveryPorts } from "../../functions/app/events/deliver-events.ts";
import { runScheduledPass } from "../../functions/app/scheduled-pass.ts";
import { memoryLogger } from "../support/app.ts";
import { testClock } from "../support/clock.ts";
import { scopedDatabase } from "../support/database.ts";
import { type ReceivedMessage, startEventReceiver } from "../support/event-receiver.ts";
import { memoryMailer } from "../support/mailer.ts";

// Delivery of the events to the endpoints staff configure (functions/app/events/deliver-events.ts,
// supabase/schemas/14_events_delivery.sql), to a receiver that verifies every request with the
// `standardwebhooks` package, as an automation platform would.

const database = scopedDatabase();
let db: Database;
let clock: ReturnType<typeof testClock>;
let logLines: string[];
let ports: EventDeliveryPorts;
let receivers: Array<{ close(): Promise<void> }> = [];

beforeAll(() => {
  db = database.db;
});

beforeEach(async () => {
  // Each test's endpoint is the only one enabled: no other test's receiver is owed its events.
  await db.query("update public.event_endpoints set enabled = false, disabled_at = now() where enabled");
  // A clock of its own: a receiver verifies the timestamps it signs against the real one.
  clock = testClock();
  const logger = memoryLogger();
  logLines = logger.lines;
  ports = { db, log: logger.log, now: clock.now };
});

afterEach(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  receivers = [];
});

let counter = 0;
const newKey = () => `HOOK-${String(++counter).padStart(4, "0")}-${String(process.pid % 10000).padStart(4, "0")}-0001`;

/** A receiver, and an endpoint pointing at it with its own secret. */
async function endpoint(options: { batchSize?: number; eventTypes?: string[]; answer?: (message: ReceivedMessage) => number | "hang" } = {}) {
  const [row] = await db.query<{ id: string; secret: string }>("select id, secret from (select cadence.new_webhook_secret() as secret) as s, lateral (select gen_random_uuid() as id) as i");
  const receiver = await startEventReceiver({ secret: row.secret, answer: options.answer });
  receivers.push(receiver);
  await db.query(
    `insert into public.event_endpoints (id, url, secret, batch_size, event_types, notify_email, next_attempt_at)
     values ($1, $2, $3, $4, $5, 'staff@example.com', $6)`,
    // Due on the test's clock, which started before the database's now().
    [row.id, receiver.url, row.secret, options.batchSize ?? 100, options.eventTypes ?? null, new Date(clock.now()).toISOString()],
  );
  return { id: row.id, secret: row.secret, receiver };
}

/** A new key in a new account: account.created, then license_key.created. */
async function newAccountWithKey() {
  const key = newKey();
  const email = `${key.toLowerCase()}@example.com`;
  const [account] = await db.query<{ id: string }>("insert into public.accounts (email, display_name) values ($1, 'Hook') returning id", [email]);
  await db.query("insert into public.license_keys (key, account_id, email) values ($1, $2, $3)", [key, account.id, email]);
  return { key, email, accountId: account.id };
}

const deliver = () => deliverEvents(ports, { random: () => 1 });

describe("a delivery", () => {
  it("is signed with the endpoint's secret (standardwebhooks verifies it) and carries the events of the change, in order", async () => {
    const { receiver } = await endpoint();
    const { key, accountId } = await newAccountWithKey();
    await db.query("select * from cadence.suspend_license_key($1)", [key]);
    expect(await deliver()).toMatchObject({ messages: 1, events: 3, failed: 0 });
    const [message] = receiver.messages;
    expect(message.verified).toBe(true);
    expect(message.events.map((event) => [event.type, event.sequence])).toEqual([
      ["account.created", 1], ["license_key.created", 1], ["license_key.suspended", 2],
    ]);
    expect(message.events[2]).toMatchObject({ license_key: key, account_id: accountId, data: { active: false, license_key: key } });
  });

  it("leaves nothing due once accepted", async () => {
    const { receiver } = await endpoint();
    await newAccountWithKey();
    await deliver();
    expect(await deliver()).toEqual({ messages: 0, events: 0, failed: 0, disabled: 0 });
    expect(receiver.messages).toHaveLength(1);
  });

  it("goes only to an endpoint that takes the event's type", async () => {
    const { receiver } = await endpoint({ eventTypes: ["license_key.suspended"] });
    const { key } = await newAccountWithKey();
    await db.query("select * from cadence.suspend_license_key($1)", [key]);
    await deliver();
    expect(receiver.accepted().map((event) => event.type)).toEqual(["license_key.suspended"]);
  });

  it("is shown in the delivery log as delivered, under its webhook-id", async () => {
    const { id, receiver } = await endpoint();
    await newAccountWithKey();
    await deliver();
    const log = await db.query<{ state: string; webhook_id: string; attempts: number; last_status: number }>(
      "select state, webhook_id, attempts, last_status from public.event_delivery_log where endpoint_id = $1", [id]);
    expect(log).toHaveLength(2);
    expect(log.every((row) => row.state === "delivered" && row.webhook_id === receiver.messages[0].webhookId && row.last_status === 200)).toBe(true);
  });
});

describe("the scheduled pass", () => {
  it("delivers what is owed, beside the outbox and the alert passes", async () => {
    const { receiver } = await endpoint();
    const { key } = await newAccountWithKey();
    const report = await runScheduledPass({ ...ports, mailer: memoryMailer().mailer });
    expect(report.events).toMatchObject({ messages: 1, events: 2 });
    expect(receiver.accepted().map((event) => event.license_key ?? event.type)).toEqual(["account.created", key]);
  });
});

describe("retries", () => {
  it("a failed message is sent again as it was: the same webhook-id and events, not before its backoff", async () => {
    let failing = true;
    const { receiver } = await endpoint({ answer: () => (failing ? 503 : 200) });
    await newAccountWithKey();
    expect(await deliver()).toMatchObject({ failed: 1 });
    expect(await deliver()).toMatchObject({ messages: 0, failed: 0 });
    failing = false;
    clock.advance(eventRetryDelayMs(1, () => 1));
    expect(await deliver()).toMatchObject({ messages: 1 });
    const [first, second] = receiver.messages;
    expect(second.webhookId).toBe(first.webhookId);
    expect(second.events).toEqual(first.events);
    expect(logLines.join("\n")).toContain("event_delivery_failed");
  });

  it("a key's later event waits behind its earlier one: never delivered first", async () => {
    let failing = true;
    const { receiver } = await endpoint({ answer: () => (failing ? 500 : 200) });
    const { key } = await newAccountWithKey();
    await deliver();
    await db.query("select * from cadence.suspend_license_key($1)", [key]);
    await db.query("select * from cadence.reinstate_license_key($1)", [key]);
    clock.advance(eventRetryDelayMs(1, () => 1));
    await deliver();
    failing = false;
    clock.advance(eventRetryDelayMs(2, () => 1));
    await deliver();
    expect(receiver.accepted().filter((event) => event.license_key === key).map((event) => event.sequence)).toEqual([1, 2, 3]);
  });

  it("the wait doubles from 5 s to an hour at most, drawn between half and all of it", () => {
    expect([1, 2, 3].map((failures) => eventRetryDelayMs(failures, () => 1))).toEqual([5_000, 10_000, 20_000]);
    expect(eventRetryDelayMs(30, () => 1)).toBe(3_600_000);
    expect(eventRetryDelayMs(1, () => 0)).toBe(2_500);
  });

  it("an endpoint failing for three days is disabled, and its notify_email gets an e-mail through the outbox", async () => {
    const { id } = await endpoint({ answer: () => 500 });
    await newAccountWithKey();
    await deliver();
    clock.advance(EVENT_RETRY_WINDOW_MS);
    expect(await deliver()).toMatchObject({ disabled: 1 });
    const [row] = await db.query<{ enabled: boolean; disabled_reason: string }>("select enabled, disabled_reason from public.event_endpoints where id = $1", [id]);
    expect(row).toEqual({ enabled: false, disabled_reason: expect.stringContaining("three days") });
    const [mail] = await db.query<{ recipient: string; subject: string }>(
      "select recipient, subject from public.email_outbox where subject like 'Cadence: event endpoint%' order by created_at desc limit 1");
    expect(mail).toEqual({ recipient: "staff@example.com", subject: expect.stringMatching(/^Cadence: event endpoint 127\.0\.0\.1:\d+ disabled$/) });
    const [state] = await db.query<{ state: string }>("select distinct state from public.event_delivery_log where endpoint_id = $1", [id]);
    expect(state.state).toBe("endpoint disabled");
  });

  it("a receiver that does not answer in time counts as a failure", async () => {
    const { receiver } = await endpoint({ answer: () => "hang" });
    await newAccountWithKey();
    expect(await deliverEvents(ports, { random: () => 1, timeoutMs: 200 })).toMatchObject({ failed: 1 });
    expect(receiver.messages).toHaveLength(1);
  });

  it("logs the endpoint's id and the message's, never the url, a secret or a key", async () => {
    const { secret } = await endpoint({ answer: () => 500 });
    const { key } = await newAccountWithKey();
    await deliver();
    const text = logLines.join("\n");
    expect(text).toContain("event_delivery_failed");
    expect(text).not.toContain(secret.slice(6));
    expect(text).not.toContain(key);
    expect(text).not.toContain("127.0.0.1");
  });
});

describe("secret rotation", () => {
  it("both secrets sign while the old one is kept: a receiver with either verifies", async () => {
    const { id, secret, receiver } = await endpoint();
    const [{ rotated }] = await db.query<{ rotated: string }>("select cadence.rotate_event_endpoint_secret($1) as rotated", [id]);
    expect(rotated).not.toBe(secret);
    await newAccountWithKey();
    await deliver();
    expect(receiver.messages[0].verified).toBe(true);
    expect(receiver.messages[0].signature.split(" ")).toHaveLength(2);
    receiver.useSecret(rotated);
    await newAccountWithKey();
    await deliver();
    expect(receiver.messages[1].verified).toBe(true);
  });

  it("after the overlap only the new secret signs", async () => {
    const { id, receiver } = await endpoint();
    const [{ rotated }] = await db.query<{ rotated: string }>("select cadence.rotate_event_endpoint_secret($1, interval '1 second') as rotated", [id]);
    clock.advance(60_000);
    receiver.useSecret(rotated);
    await newAccountWithKey();
    await deliver();
    expect(receiver.messages[0]).toMatchObject({ verified: true });
    expect(receiver.messages[0].signature.split(" ")).toHaveLength(1);
  });
});

describe("replay", () => {
  it("staff replay an event: it arrives again with its own id and sequence", async () => {
    const { id, receiver } = await endpoint();
    const { key } = await newAccountWithKey();
    await deliver();
    const [event] = await db.query<{ id: string }>("select id from public.events where license_key = $1 and sequence = 1", [key]);
    const [{ queued }] = await db.query<{ queued: number }>("select cadence.replay_event($1, $2) as queued", [event.id, id]);
    expect(queued).toBe(1);
    await deliver();
    const again = receiver.messages[1].events;
    expect(again).toEqual([expect.objectContaining({ id: event.id, sequence: 1, license_key: key })]);
    expect(receiver.messages[1].webhookId).not.toBe(receiver.messages[0].webhookId);
  });
});

describe("a fleet's outage is not a flood", () => {
  it("1,000 kiosks gone dark reach the receiver as messages of batch_size events, one at a time, from two workers at once", async () => {
    const { receiver } = await endpoint({ batchSize: 250 });
    const keys = Array.from({ length: 1_000 }, () => newKey());
    await db.query(
      "insert into public.license_keys (key, account_id, email) select k, 'a0000000-0000-4000-8000-000000000001', 'demo@example.com' from unnest($1::text[]) as k",
      [keys],
    );
    await db.query(
      `insert into public.kiosk_outages (license_key, account_id, dark_since, last_seen_at, alerted_at)
       select k, 'a0000000-0000-4000-8000-000000000001', now(), now(), now() from unnest($1::text[]) as k`,
      [keys],
    );
    const reports = await Promise.all([deliver(), deliver()]);
    expect(reports.reduce((sum, report) => sum + report.events, 0)).toBe(2_000);
    expect(receiver.messages).toHaveLength(8);
    expect(receiver.messages.every((message) => message.events.length === 250)).toBe(true);
    expect(receiver.mostInFlight()).toBe(1);
    expect(receiver.accepted().filter((event) => event.type === "kiosk.offline")).toHaveLength(1_000);
  });
});
