import { type Database, sqlTimestamp } from "../db/database.ts";

/** What one instance saw of a license key since its last write: the latest call's time and client IP. */
export interface Sighting {
  /** When (epoch milliseconds, `Deps.now`). */
  at: number;
  /** The client IP, or null when it was unknown. */
  ip: string | null;
  /** The schedule version the kiosk now holds, when a schedule read told; null otherwise. */
  version: string | null;
}

/**
 * Writes many keys' sightings in one statement (cadence.record_kiosk_sightings): the latest wins
 * per key, and keys that no longer exist are skipped.
 *
 * @example
 * await recordSightings(db, [["DEMO-0000-0000-0001", { at: Date.now(), ip: "203.0.113.7", version: null }]]);
 */
export async function recordSightings(db: Database, sightings: ReadonlyArray<readonly [key: string, sighting: Sighting]>): Promise<void> {
  await db.query(
    "select cadence.record_kiosk_sightings($1::text[], $2::timestamptz[], $3::inet[], $4::text[])",
    [
      sightings.map(([key]) => key),
      sightings.map(([, sighting]) => sqlTimestamp(sighting.at)),
      sightings.map(([, sighting]) => sighting.ip),
      sightings.map(([, sighting]) => sighting.version),
    ],
  );
}
