import type { Database } from "../db/database.ts";
import { licenseEmail } from "../mail/license-email.ts";
import { generateLicenseKey } from "./license-key-generator.ts";
import { type Onboarding, onboardingAnswer } from "./schemas.ts";
import { type IdempotencyId, onboard, onboardOnce } from "./store.ts";

/** A taken key is a one-in-36^16 event; a few fresh draws settle it, more would mean a broken generator. */
const KEY_DRAWS = 5;

export interface Onboarded {
  accountId: string;
  outboxId: string;
  key: string;
}

/**
 * Creates the account if absent, issues it a new license key and queues the e-mail carrying the
 * key, all in one transaction; a key that already exists is redrawn.
 *
 * @example
 * const { accountId, outboxId } = await onboardAccount({ db, now: Date.now }, { email, name });
 */
export async function onboardAccount(
  ports: { db: Database; now: () => number; newKey?: () => string },
  input: Onboarding,
): Promise<Onboarded> {
  const newKey = ports.newKey ?? (() => generateLicenseKey());
  for (let draw = 0; draw < KEY_DRAWS; draw++) {
    const key = newKey();
    const message = licenseEmail({ to: input.email, name: input.name, key });
    const row = await onboard(ports.db, { ...input, key, message, nowMs: ports.now() });
    if (row.key_issued && row.outbox_id) return { accountId: row.account_id, outboxId: row.outbox_id, key };
  }
  throw new Error(`no unused license key after ${KEY_DRAWS} draws`);
}

/** What `onboardAccountOnce` carried out: `Onboarded` and the answer it stored for retries. */
export interface OnboardedOnce extends Onboarded {
  /** The 200's exact text, as stored: serve these bytes. */
  answer: string;
}

/**
 * `onboardAccount` for a claimed id: in the same transaction, the claim becomes the answer a retry
 * gets (cadence.onboard_once), so a crash after the commit still leaves it to replay. `"lost"`
 * when the claim no longer holds (its lease ran out and another request took the id over): this
 * request then carried nothing out.
 *
 * @example
 * const done = await onboardAccountOnce(deps, { email, name }, { claim, token });
 */
export async function onboardAccountOnce(
  ports: { db: Database; now: () => number; newKey?: () => string },
  input: Onboarding,
  once: { claim: IdempotencyId; token: string },
): Promise<OnboardedOnce | "lost"> {
  const newKey = ports.newKey ?? (() => generateLicenseKey());
  const answerTemplate = onboardingAnswer("{user_id}");
  for (let draw = 0; draw < KEY_DRAWS; draw++) {
    const key = newKey();
    const message = licenseEmail({ to: input.email, name: input.name, key });
    const row = await onboardOnce(ports.db, { ...once, ...input, key, message, nowMs: ports.now(), answerTemplate });
    if (row.outcome === "lost") return "lost";
    if (row.outcome === "done") return { accountId: row.account_id, outboxId: row.outbox_id!, key, answer: row.response_body! };
  }
  throw new Error(`no unused license key after ${KEY_DRAWS} draws`);
}
