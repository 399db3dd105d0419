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

/** Where an onboarding's id came from: namespaces of their own, so the two schemes' ids never meet. */
export type IdempotencySource = "idempotency-key" | "webhook-id";

/** An onboarding id: the `Idempotency-Key` header, or Standard Webhooks' signed `webhook-id`. */
export interface IdempotencyId {
  source: IdempotencySource;
  id: string;
}

export type Claim =
  | { outcome: "claimed"; token: string }
  | { outcome: "replay"; status: number; body: string }
  | { outcome: "mismatch" }
  | { outcome: "busy"; retryAfterSeconds: number };

/**
 * Claims `key` for `leaseSeconds` (cadence.claim_onboarding_key), or says why not: its first
 * answer to replay, another body, or a request with it running.
 */
export async function claimOnboardingKey(
  db: Database,
  key: IdempotencyId,
  bodySha256Hex: string,
  nowMs: number,
  leaseSeconds: number,
): Promise<Claim> {
  const [row] = await db.query<{
    outcome: Claim["outcome"];
    claim_token: string | null;
    response_status: number | null;
    response_body: string | null;
    retry_after_seconds: number | null;
  }>(
    `select outcome, claim_token, response_status, response_body, retry_after_seconds
     from cadence.claim_onboarding_key($1, $2, decode($3, 'hex'), $4::timestamptz, $5)`,
    [key.source, key.id, bodySha256Hex, sqlTimestamp(nowMs), leaseSeconds],
  );
  switch (row.outcome) {
    case "claimed":
      return { outcome: "claimed", token: row.claim_token! };
    case "replay":
      return { outcome: "replay", status: row.response_status!, body: row.response_body! };
    case "busy":
      return { outcome: "busy", retryAfterSeconds: row.retry_after_seconds! };
    default:
      return { outcome: "mismatch" };
  }
}

export interface OnboardOnceRow extends OnboardRow {
  outcome: "done" | "key_taken" | "lost";
  response_body: string | null;
}

/**
 * `onboard` for a claimed id (cadence.onboard_once): in the same transaction, the claim becomes the
 * answer to replay, `answerTemplate` with the JSON string "{user_id}" replaced by the account id.
 */
export async function onboardOnce(
  db: Database,
  input: { claim: IdempotencyId; token: string; email: string; name: string; key: string; message: EmailMessage; nowMs: number; answerTemplate: string },
): Promise<OnboardOnceRow> {
  const [row] = await db.query<OnboardOnceRow>(
    `select outcome, account_id, key_issued, outbox_id, response_body
     from cadence.onboard_once($1, $2, $3::uuid, $4, $5, $6, $7, $8, $9, $10::timestamptz, $11)`,
    [
      input.claim.source, input.claim.id, input.token, input.email, input.name, input.key,
      input.message.subject, input.message.text, input.message.html, sqlTimestamp(input.nowMs), input.answerTemplate,
    ],
  );
  return row;
}

/** Gives up a claim that carried nothing out, so a retry runs at once (cadence.release_onboarding_key). */
export async function releaseOnboardingKey(db: Database, key: IdempotencyId, token: string): Promise<void> {
  await db.query("select cadence.release_onboarding_key($1, $2, $3::uuid)", [key.source, key.id, token]);
}

/** Deletes up to `limit` onboarding ids past their 24 hours (cadence.purge_onboarding_keys); how many. */
export async function purgeOnboardingKeys(db: Database, nowMs: number, limit: number): Promise<number> {
  const [row] = await db.query<{ purged: number }>(
    "select cadence.purge_onboarding_keys($1::timestamptz, $2) as purged",
    [sqlTimestamp(nowMs), limit],
  );
  return row.purged;
}
