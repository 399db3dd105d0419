import * as z from "zod";
import { EVENT_RETRY_WINDOW_MS, eventRetryDelayMs } from "../backoff.ts";
import { type Database, sqlTimestamp } from "../db/database.ts";
import { errorMessage, type Logger } from "../log.ts";
import { endpointDisabledEmail } from "../mail/endpoint-disabled-email.ts";
import { signWithSecrets } from "../signatures/standard-webhooks.ts";

/** How long an endpoint is held by the worker sending to it: far beyond the request's timeout. */
export const EVENT_LEASE_SECONDS = 60;

/** The longest a receiver may take to answer one message before the attempt counts as failed. */
export const EVENT_REQUEST_TIMEOUT_MS = 10_000;

/** What delivery needs; the app's `Deps` has it all. */
export interface EventDeliveryPorts {
  db: Database;
  log: Logger;
  /** The clock, in epoch milliseconds. */
  now: () => number;
}

export interface EventDeliveryReport {
  /** Messages the endpoints accepted, and the events they carried. */
  messages: number;
  events: number;
  /** Attempts that failed (no answer in time, or not a 2xx). */
  failed: number;
  /** Endpoints disabled by this run after three days of failures. */
  disabled: number;
}

const Claimed = z.object({
  batch_id: z.string(),
  endpoint_id: z.string(),
  url: z.string(),
  secrets: z.array(z.string()).min(1),
  attempts: z.number(),
  failures: z.number(),
  failing_since: z.coerce.date().nullable(),
  events: z.array(z.record(z.string(), z.unknown())).nullable(),
});
type Claimed = z.infer<typeof Claimed>;

async function claim(ports: EventDeliveryPorts): Promise<Claimed | undefined> {
  const [row] = await ports.db.query("select * from cadence.claim_event_batch($1::timestamptz, $2)", [
    sqlTimestamp(ports.now()),
    EVENT_LEASE_SECONDS,
  ]);
  return row ? Claimed.parse(row) : undefined;
}

/** Posts one message; resolves to the answer's status, or throws when none came in time. */
async function post(message: Claimed, body: string, nowMs: number, timeoutMs: number): Promise<number> {
  const response = await fetch(message.url, {
    method: "POST",
    headers: { "content-type": "application/json", ...signWithSecrets(message.secrets, body, { id: message.batch_id, nowMs }) },
    body,
    redirect: "manual",
    signal: AbortSignal.timeout(timeoutMs),
  });
  // The status is the whole answer: the body is discarded, which frees the connection.
  await response.body?.cancel();
  return response.status;
}

/** Sends one claimed message and records the outcome; disables the endpoint after three days of failures. */
async function send(
  ports: EventDeliveryPorts,
  message: Claimed,
  options: { random: () => number; timeoutMs: number },
): Promise<"delivered" | "failed" | "disabled"> {
  const events = message.events ?? [];
  const body = JSON.stringify({ events });
  const startedAt = ports.now();
  let status = 0;
  let error: string;
  try {
    // A message whose events were all deleted since (staff deleted them) has nothing to send.
    status = events.length === 0 ? 204 : await post(message, body, startedAt, options.timeoutMs);
    if (status >= 200 && status < 300) {
      await ports.db.query("select cadence.mark_event_batch_delivered($1::uuid, $2, $3::timestamptz)", [message.batch_id, status, sqlTimestamp(ports.now())]);
      return "delivered";
    }
    error = `HTTP ${status}`;
  } catch (failure) {
    error = errorMessage(failure);
  }
  const now = ports.now();
  const failingSince = message.failing_since?.getTime() ?? startedAt;
  const fields = { endpointId: message.endpoint_id, webhookId: message.batch_id, events: events.length, attempt: message.attempts, status, error };
  if (now - failingSince >= EVENT_RETRY_WINDOW_MS) {
    const email = endpointDisabledEmail({
      endpointId: message.endpoint_id,
      host: new URL(message.url).host,
      failingSince: new Date(failingSince).toISOString(),
      lastError: error,
    });
    await ports.db.query("select cadence.mark_event_batch_failed($1::uuid, $2, $3, $4::timestamptz, $4::timestamptz)", [
      message.batch_id, status || null, error, sqlTimestamp(now),
    ]);
    await ports.db.query("select cadence.disable_event_endpoint($1::uuid, $2, $3::timestamptz, $4, $5, $6)", [
      message.endpoint_id, `failed every delivery for three days: ${error}`, sqlTimestamp(now), email.subject, email.text, email.html,
    ]);
    ports.log("error", "event_endpoint_disabled", fields);
    return "disabled";
  }
  const retryAt = now + eventRetryDelayMs(message.failures + 1, options.random);
  await ports.db.query("select cadence.mark_event_batch_failed($1::uuid, $2, $3, $4::timestamptz, $5::timestamptz)", [
    message.batch_id, status || null, error, sqlTimestamp(now), sqlTimestamp(retryAt),
  ]);
  ports.log("warn", "event_delivery_failed", fields);
  return "failed";
}

/**
 * Delivers the events owed to the endpoints: claims an endpoint due with something to send, posts
 * its message (up to its batch_size events, signed with Standard Webhooks, webhook-id the
 * message's id), records the answer, and goes on until nothing is due, `budgetMs` has passed or
 * `signal` is aborted. One message per endpoint is in flight at a time, whatever the number of
 * workers (the claim leases the endpoint), so a key's events arrive in order and a receiver sees one
 * request at a time per endpoint. A failure is retried with backoff (`eventRetryDelayMs`); after
 * three days of failures the endpoint is disabled and its notify_email told, through the outbox.
 * Logs carry the endpoint's id and the message's, never a url, a secret or an event.
 *
 * @example
 * const report = await deliverEvents(deps, { budgetMs: 20_000 });
 */
export async function deliverEvents(
  ports: EventDeliveryPorts,
  options: { budgetMs?: number; signal?: AbortSignal; random?: () => number; timeoutMs?: number } = {},
): Promise<EventDeliveryReport> {
  const deadline = ports.now() + (options.budgetMs ?? 20_000);
  const sending = { random: options.random ?? Math.random, timeoutMs: options.timeoutMs ?? EVENT_REQUEST_TIMEOUT_MS };
  const report: EventDeliveryReport = { messages: 0, events: 0, failed: 0, disabled: 0 };
  while (ports.now() < deadline && !options.signal?.aborted) {
    const message = await claim(ports);
    if (!message) break;
    const outcome = await send(ports, message, sending);
    if (outcome === "delivered") {
      report.messages += 1;
      report.events += message.events?.length ?? 0;
    } else {
      report[outcome] += 1;
    }
  }
  return report;
}
