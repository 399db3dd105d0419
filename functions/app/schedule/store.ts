import type { Database } from "../db/database.ts";

/** How cadence.license_pairing pairs a key with an e-mail. */
export type PairingOutcome = "key_not_found" | "user_not_found" | "not_owner" | "paired";

/**
 * The stored schedule payload of a license key as JSON text ({type, daily, weekly, blocks}), or
 * null when the key is unknown.
 */
export async function readSchedulePayload(db: Database, key: string): Promise<string | null> {
  const [row] = await db.query<{ body: string | null }>("select cadence.license_schedule($1)::text as body", [key]);
  return row.body;
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
