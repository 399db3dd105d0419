import { retryDelayMs } from "../backoff.ts";
import { type Database, sqlTimestamp } from "../db/database.ts";
import { errorMessage, type Logger } from "../log.ts";
import type { Mailer } from "./mailer.ts";

/**
 * How long a claimed row is reserved for the worker sending it: far beyond the mailer's timeout,
 * so a slow send is never taken over, and short enough that a crashed worker's row comes back soon.
 */
export const OUTBOX_LEASE_SECONDS = 300;

/** The ports delivery needs; the app's `Deps` has them all. */
export interface OutboxPorts {
  db: Database;
  log: Logger;
  /** The clock, in epoch milliseconds. */
  now: () => number;
  mailer: Mailer;
}

interface ClaimedEmail {
  id: string;
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
  attempts: number;
}


/** Claims one due row (that row only, when `id` is given), skipping rows other workers hold. */
async function claim(ports: OutboxPorts, id: string | null): Promise<ClaimedEmail | undefined> {
  const [row] = await ports.db.query<ClaimedEmail>(
    `select id, recipient, subject, text_body, html_body, attempts
     from cadence.claim_emails($1::timestamptz, $2, 1, $3::uuid)`,
    [sqlTimestamp(ports.now()), OUTBOX_LEASE_SECONDS, id],
  );
  return row;
}

/** Sends a claimed row and records the outcome: sent, or pending with its error and next try. */
async function send(ports: OutboxPorts, row: ClaimedEmail): Promise<"sent" | "failed"> {
  try {
    await ports.mailer.send({
      to: row.recipient,
      subject: row.subject,
      text: row.text_body,
      html: row.html_body,
      idempotencyKey: `cadence-email/${row.id}`,
    });
  } catch (error) {
    const message = errorMessage(error);
    await ports.db.query("select cadence.mark_email_failed($1::uuid, $2, $3::timestamptz)", [
      row.id,
      message,
      sqlTimestamp(ports.now() + retryDelayMs(row.attempts)),
    ]);
    ports.log("warn", "email_delivery_failed", { outboxId: row.id, attempts: row.attempts, error: message });
    return "failed";
  }
  await ports.db.query("select cadence.mark_email_sent($1::uuid, $2::timestamptz)", [row.id, sqlTimestamp(ports.now())]);
  return "sent";
}

/**
 * Delivers one queued e-mail right after the transaction that queued it committed. Best effort:
 * it never throws; whatever goes wrong leaves the row pending for `deliverPending`.
 *
 * @example
 * await deliverEmail(deps, outboxId);
 */
export async function deliverEmail(ports: OutboxPorts, id: string): Promise<"sent" | "failed" | "not_due"> {
  try {
    const row = await claim(ports, id);
    return row ? await send(ports, row) : "not_due";
  } catch (error) {
    ports.log("error", "email_delivery_failed", { outboxId: id, error: errorMessage(error) });
    return "failed";
  }
}

export interface DeliveryReport {
  sent: number;
  failed: number;
}

/**
 * Sends every pending e-mail whose next attempt is due, one claimed row at a time (each claim its
 * own lease), until none is due, `max` rows were tried, `budgetMs` has passed or `signal` is
 * aborted (the process is stopping: the row under way is sent and recorded first). Safe to run in
 * several workers at once: a row is claimed by one of them only.
 *
 * @example
 * const report = await deliverPending(deps);
 */
export async function deliverPending(
  ports: OutboxPorts,
  options: { max?: number; budgetMs?: number; signal?: AbortSignal } = {},
): Promise<DeliveryReport> {
  const max = options.max ?? 100;
  const deadline = ports.now() + (options.budgetMs ?? 60_000);
  const report: DeliveryReport = { sent: 0, failed: 0 };
  while (report.sent + report.failed < max && ports.now() < deadline && !options.signal?.aborted) {
    const row = await claim(ports, null);
    if (!row) break;
    report[await send(ports, row)] += 1;
  }
  return report;
}
