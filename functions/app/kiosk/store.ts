import { type Database, sqlTimestamp } from "../db/database.ts";

/** What one instance saw of a key from one network (an IPv4 address, an IPv6 /64) since its last write. */
export interface NetworkCalls {
  /** The first and the last call from this network (epoch milliseconds). */
  first: number;
  last: number;
  calls: number;
  /** Calls back on this network after a call from another network of the key (seat checks). */
  returns: number;
}

/** What one instance saw of a license key since its last write: the latest call, and the seat-check counts. */
export interface Sighting {
  /** When (epoch milliseconds, `Deps.now`). */
  at: number;
  /** The client IP, or null when it was unknown. */
  ip: string | null;
  /** The schedule version the kiosk now holds, when a schedule read told; null otherwise. */
  version: string | null;
  /** Successful calls with the key. */
  calls: number;
  /** The first and the last system name the kiosk wrote, and how often the written name changed between them. */
  firstName: string | null;
  lastName: string | null;
  nameChanges: number;
  /** Per network the calls came from; calls from an unknown IP are in none. */
  networks: Map<string, NetworkCalls>;
  /** Per address family, the network of its latest call. */
  lastNetworkOf: { v4: string | null; v6: string | null };
}

/**
 * A key's entry at its first call since the last write, before that call is counted.
 *
 * @example
 * const sighting = firstSighting(Date.now(), "203.0.113.7");
 */
export function firstSighting(at: number, ip: string | null): Sighting {
  return { at, ip, version: null, calls: 0, firstName: null, lastName: null, nameChanges: 0, networks: new Map(), lastNetworkOf: { v4: null, v6: null } };
}

/**
 * Writes many keys' sightings in one statement (cadence.record_kiosk_sightings): the latest wins
 * per key, keys that no longer exist are skipped, and the seat-check evidence (calls, system
 * names, networks) rides along.
 *
 * @example
 * await recordSightings(db, [["DEMO-0000-0000-0001", sighting]]);
 */
export async function recordSightings(db: Database, sightings: ReadonlyArray<readonly [key: string, sighting: Sighting]>): Promise<void> {
  const networks = sightings.flatMap(([key, sighting]) => [...sighting.networks].map(([network, calls]) => ({ key, network, ...calls })));
  await db.query(
    `select cadence.record_kiosk_sightings($1::text[], $2::timestamptz[], $3::inet[], $4::text[], $5::integer[], $6::text[], $7::text[],
       $8::integer[], $9::text[], $10::cidr[], $11::timestamptz[], $12::timestamptz[], $13::integer[], $14::integer[])`,
    [
      sightings.map(([key]) => key),
      sightings.map(([, sighting]) => sqlTimestamp(sighting.at)),
      sightings.map(([, sighting]) => sighting.ip),
      sightings.map(([, sighting]) => sighting.version),
      sightings.map(([, sighting]) => sighting.calls),
      sightings.map(([, sighting]) => sighting.firstName),
      sightings.map(([, sighting]) => sighting.lastName),
      sightings.map(([, sighting]) => sighting.nameChanges),
      networks.map((row) => row.key),
      networks.map((row) => row.network),
      networks.map((row) => sqlTimestamp(row.first)),
      networks.map((row) => sqlTimestamp(row.last)),
      networks.map((row) => row.calls),
      networks.map((row) => row.returns),
    ],
  );
}
