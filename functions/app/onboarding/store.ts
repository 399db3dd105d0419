import { type Database, sqlTimestamp } from "../db/database.ts";
import type { EmailMessage } from "../mail/mailer.ts";


/** Records an accepted nonce; false when it was already seen within the window (a replay). */
export async function recordNonce(db: Database, nonce: string, nowMs: number): Promise<boolean> {
  const [row] = await db.query<{ fresh: boolean }>(
    "select cadence.record_webhook_nonce($1, $2::timestamptz) as fresh",
    [nonce, sqlTimestamp(nowMs)],
  );
  return row.fresh;
}

export interface OnboardRow {
  account_id: string;
  key_issued: boolean;
  outbox_id: string | null;
}

/**
 * One transaction: the account for `email` if absent, `key` issued to it, and `message` queued.
 * `key_issued` is false (and nothing but the account stored) when `key` already exists.
 */
export async function onboard(
  db: Database,
  input: { email: string; name: string; key: string; message: EmailMessage; nowMs: number },
): Promise<OnboardRow> {
  const [row] = await db.query<OnboardRow>(
    "select account_id, key_issued, outbox_id from cadence.onboard($1, $2, $3, $4, $5, $6, $7::timestamptz)",
    [input.email, input.name, input.key, input.message.subject, input.message.text, input.message.html, sqlTimestamp(input.nowMs)],
  );
  return row;
}
