import { type Database, sqlTimestamp } from "../db/database.ts";

/** Calls of one key less than the poll gap apart, as one instance saw them: one poll, or a kiosk starting (seat checks). */
export interface Burst {
  /** The first and the last call (epoch milliseconds). */
  first: number;
  last: number;
  /** It holds a call kiosks make when they start (a license validation, a system-name write). */
  starting: boolean;
  /** The tag of the network its calls came from (poll-network.ts); null when from several, or unknown. */
  network: number | null;
}

/** What one instance saw of a license key since its last write: the latest call, and the seat-check counts. */
export interface Sighting {
  /** When (epoch milliseconds, `Deps.now`). */
  at: number;
  /** The client IP, or null when it was unknown. */
  ip: string | null;
  /** The schedule version the kiosk now holds, when a schedule read told; null otherwise. */
  version: string | null;
  /** The first and the last system name the kiosk wrote, and how often the written name changed between them. */
  firstName: string | null;
  lastName: string | null;
  nameChanges: number;
  /** Its successful calls in bursts, oldest first. */
  bursts: Burst[];
}

/**
 * A key's entry at its first call since the last write, before that call is counted.
 *
 * @example
 * const sighting = firstSighting(Date.now(), "203.0.113.7");
 */
export function firstSighting(at: number, ip: string | null): Sighting {
  return { at, ip, version: null, firstName: null, lastName: null, nameChanges: 0, bursts: [] };
}

/**
 * Writes many keys' sightings in one statement (cadence.record_kiosk_polls): the latest wins per
 * key, keys that no longer exist are skipped, and the seat-check evidence (system names, bursts of
 * calls formed with `pollGapMs`) rides along.
 *
 * @example
 * await recordSightings(db, [["DEMO-0000-0000-0001", sighting]], POLL_GAP_MS);
 */
export async function recordSightings(db: Database, sightings: ReadonlyArray<readonly [key: string, sighting: Sighting]>, pollGapMs: number): Promise<void> {
  // Each key's bursts are the flat arrays' [from : from + count - 1] (1-based), in key order.
  const from: number[] = [];
  let next = 1;
  for (const [, sighting] of sightings) {
    from.push(next);
    next += sighting.bursts.length;
  }
  const bursts = sightings.flatMap(([, sighting]) => sighting.bursts);
  await db.query(
    `select cadence.record_kiosk_polls($1::text[], $2::timestamptz[], $3::inet[], $4::text[], $5::text[], $6::text[], $7::integer[],
       $8::interval, $9::integer[], $10::integer[], $11::timestamptz[], $12::timestamptz[], $13::boolean[], $14::integer[])`,
    [
      sightings.map(([key]) => key),
      sightings.map(([, sighting]) => sqlTimestamp(sighting.at)),
      sightings.map(([, sighting]) => sighting.ip),
      sightings.map(([, sighting]) => sighting.version),
      sightings.map(([, sighting]) => sighting.firstName),
      sightings.map(([, sighting]) => sighting.lastName),
      sightings.map(([, sighting]) => sighting.nameChanges),
      `${pollGapMs} milliseconds`,
      from,
      sightings.map(([, sighting]) => sighting.bursts.length),
      bursts.map((burst) => sqlTimestamp(burst.first)),
      bursts.map((burst) => sqlTimestamp(burst.last)),
      bursts.map((burst) => burst.starting),
      bursts.map((burst) => burst.network),
    ],
  );
}
