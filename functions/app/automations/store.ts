import { type Database, sqlTimestamp } from "../db/database.ts";
import type { IdempotencyId } from "../onboarding/store.ts";

/** What one lifecycle change did (cadence.lifecycle_change): `done`, or why nothing changed. */
export interface ChangeRow {
  outcome: string;
  changed: boolean;
  account_id: string | null;
  outbox_id: string | null;
}

/**
 * Carries out one lifecycle call's change, one SQL function in one transaction
 * (cadence.lifecycle_change: cadence.suspend_license_key and its siblings).
 */
export async function lifecycleChange(db: Database, call: string, args: Record<string, unknown>, nowMs: number): Promise<ChangeRow> {
  const [row] = await db.query<ChangeRow>(
    "select outcome, changed, account_id, outbox_id from cadence.lifecycle_change($1, $2::jsonb, $3::timestamptz)",
    [call, JSON.stringify(args), sqlTimestamp(nowMs)],
  );
  return row;
}

/** `lifecycleChange` under a claimed id, with the answer a retry replays. */
export interface ChangeOnceRow extends ChangeRow {
  response_status: number | null;
  response_body: string | null;
}

/** An answer by outcome, as cadence.lifecycle_change_once stores it: `"{changed}"` and `"{user_id}"` stand for what the change did. */
export type Answers = Record<string, { status: number; body: string }>;

/**
 * `lifecycleChange` for a claimed id (cadence.lifecycle_change_once): in the same transaction the
 * claim becomes the answer of the outcome (from `answers`), replayed to every retry. `lost` when the
 * claim no longer holds; an outcome without an answer leaves the claim to try again.
 */
export async function lifecycleChangeOnce(
  db: Database,
  input: { claim: IdempotencyId; token: string; call: string; args: Record<string, unknown>; nowMs: number; answers: Answers },
): Promise<ChangeOnceRow> {
  const [row] = await db.query<ChangeOnceRow>(
    `select outcome, changed, account_id, outbox_id, response_status, response_body
     from cadence.lifecycle_change_once($1, $2, $3::uuid, $4, $5::jsonb, $6::timestamptz, $7::jsonb)`,
    [input.claim.source, input.claim.id, input.token, input.call, JSON.stringify(input.args), sqlTimestamp(input.nowMs), JSON.stringify(input.answers)],
  );
  return row;
}

/** Whom a key's license e-mail goes to (cadence.license_email_recipient); undefined for an unknown key. */
export async function licenseEmailRecipient(db: Database, key: string): Promise<{ email: string; display_name: string | null } | undefined> {
  const [row] = await db.query<{ email: string; display_name: string | null }>(
    "select email, display_name from cadence.license_email_recipient($1)",
    [key],
  );
  return row;
}
