import { type Database, sqlTimestamp } from "../db/database.ts";
import type { EmailMessage } from "../mail/mailer.ts";

/**
 * Queues the e-mails of one hook call in the outbox, in one statement, unless `event` (the body's
 * digest) was queued already; answers the new outbox ids, none for a repeat.
 */
export async function enqueueHookEmails(
  db: Database,
  input: { event: string; messages: EmailMessage[]; nowMs: number },
): Promise<string[]> {
  const emails = input.messages.map(({ to, subject, text, html }) => ({ to, subject, text, html }));
  const rows = await db.query<{ id: string }>(
    "select id::text from cadence.enqueue_hook_emails($1, $2::text::jsonb, $3::timestamptz) as id",
    [input.event, JSON.stringify(emails), sqlTimestamp(input.nowMs)],
  );
  return rows.map((row) => row.id);
}
