import type { Database } from "../db/database.ts";
import { licenseEmail } from "../mail/license-email.ts";
import { generateLicenseKey } from "./license-key-generator.ts";
import type { Onboarding } from "./schemas.ts";
import { onboard } from "./store.ts";

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
