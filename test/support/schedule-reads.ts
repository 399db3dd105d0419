import type { Database } from "../../functions/app/db/database.ts";
import { readLegacySchedulesIfChanged, readSchedulesIfChanged } from "../../functions/app/schedule/store.ts";

// One-key reads through the batch statements the routes use, for tests that read a single key.

/** The version of the key's schedule, with the payload text only when it differs from `version`; null when the key is unknown. */
export async function readScheduleIfChanged(db: Database, key: string, version: string | null) {
  return (await readSchedulesIfChanged(db, [{ key, version }]))[0];
}

/** The stored schedule payload of a license key as JSON text ({type, daily, weekly, blocks}), or null when the key is unknown. */
export async function readSchedulePayload(db: Database, key: string): Promise<string | null> {
  return (await readScheduleIfChanged(db, key, null))?.body ?? null;
}

/** The legacy read of one key and e-mail: the pairing outcome and, when paired, the version and changed payload. */
export async function readLegacyIfChanged(db: Database, key: string, email: string, version: string | null) {
  return (await readLegacySchedulesIfChanged(db, [{ key, email, version }]))[0]!;
}
