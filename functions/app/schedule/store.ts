import type { Database } from "../db/database.ts";
import type { PairingOutcome } from "../pairing.ts";

/**
 * The stored schedule payload of a license key as JSON text ({type, daily, weekly, blocks}), or
 * null when the key is unknown: a read that holds no fingerprint.
 */
export async function readSchedulePayload(db: Database, key: string): Promise<string | null> {
  return (await readScheduleIfChanged(db, key, null))?.body ?? null;
}

/**
 * The key's payload fingerprint, with the payload text only when it differs from `fingerprint`
 * (the one the caller already holds); null when the key is unknown.
 */
export async function readScheduleIfChanged(db: Database, key: string, fingerprint: string | null) {
  const [row] = await db.query<{ fingerprint: string; body: string | null }>(
    "select fingerprint, payload::text as body from cadence.license_schedule_if_changed($1, $2)",
    [key, fingerprint],
  );
  return row ?? null;
}

/**
 * The legacy read: the pairing outcome of key and e-mail and, when paired, the payload's fingerprint
 * with the payload text only when it differs from `fingerprint`.
 */
export async function readLegacyIfChanged(db: Database, key: string, email: string, fingerprint: string | null) {
  const [row] = await db.query<{ outcome: PairingOutcome; fingerprint: string | null; body: string | null }>(
    "select outcome, fingerprint, payload::text as body from cadence.legacy_schedule_if_changed($1, $2, $3)",
    [key, email, fingerprint],
  );
  return row;
}
