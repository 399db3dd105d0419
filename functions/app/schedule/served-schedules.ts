import { BoundedMap } from "../bounded-map.ts";
import { type VersionedPayload, versionPayload } from "./versioned-payload.ts";

/** Keys (and payloads) kept; a fleet larger than this only costs more transfers. */
export const SERVED_SCHEDULES_KEPT = 10_000;

/** The most payload text a cache of last served schedules holds. */
export const SERVED_SCHEDULE_BYTES = 16 << 20;

/** The bound of a cache of last served schedules (`lastKnownGood`): its entries and payload bytes. */
export const servedBound = {
  capacity: SERVED_SCHEDULES_KEPT,
  maxBytes: SERVED_SCHEDULE_BYTES,
  sizeOf: (answer: { payload: VersionedPayload | null }) => answer.payload?.body.length ?? 0,
};

/** A database answer about the schedule a key reads: its version, and its payload text only if changed. */
export interface VersionedRow {
  version: string | null;
  body: string | null;
}

/**
 * The payloads last served, by version, and the version last served per license key. A read asks
 * the database with the version held for the key; the database always decides whether the payload
 * changed and sends it only when it did. So a poll that ends in 304 moves 64 bytes from Postgres
 * instead of the whole payload, and computes nothing.
 *
 * @example
 * const served = servedSchedules();
 * const { payload } = await served.read(key, async (version) => (await readSchedulesIfChanged(db, [{ key, version }]))[0]);
 */
export function servedSchedules(capacity = SERVED_SCHEDULES_KEPT) {
  const versions = new BoundedMap<string, string>({ capacity });
  const payloads = new BoundedMap<string, VersionedPayload>({ capacity });
  return {
    /**
     * Reads `key` through `ask(version)`; `payload` is null when the answer has no payload (an
     * unknown or unpaired key). Should the payload held for the version have been dropped
     * meanwhile, it asks once more without one.
     */
    async read<Row extends VersionedRow>(key: string, ask: (version: string | null) => Promise<Row | null>) {
      let row = await ask(versions.get(key) ?? null);
      if (row?.version && row.body === null && !payloads.has(row.version)) row = await ask(null);
      if (!row?.version) return { row, payload: null };
      // Keys of one account share a schedule, and equal versions mean equal content: build it once.
      const payload = payloads.get(row.version) ?? versionPayload(row.version, row.body!);
      payloads.set(row.version, payload);
      versions.set(key, row.version);
      return { row, payload };
    },
  };
}
