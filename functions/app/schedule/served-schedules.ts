import { BoundedMap } from "../bounded-map.ts";
import { type VersionedPayload, versionPayload } from "./versioned-payload.ts";

/** Keys (and payloads) kept; a fleet larger than this only costs more transfers. */
export const SERVED_SCHEDULES_KEPT = 10_000;

/** The most payload text a cache of last served schedules holds. */
export const SERVED_SCHEDULE_BYTES = 16 << 20;

/** The bound of a cache of last served schedules (`lastKnownGood`): its entries and payload bytes. */
export function servedBound(now: () => number) {
  return {
    capacity: SERVED_SCHEDULES_KEPT,
    maxBytes: SERVED_SCHEDULE_BYTES,
    sizeOf: (answer: { payload: VersionedPayload | null }) => answer.payload?.body.length ?? 0,
    now,
  };
}

/** A database answer about a key's stored payload: its fingerprint, and its text only if changed. */
export interface FingerprintedRow {
  fingerprint: string | null;
  body: string | null;
}

/**
 * The payloads last served, by fingerprint, and the fingerprint last served per license key. A read
 * asks the database with the fingerprint held for the key; the database always decides whether the
 * payload changed and sends it only when it did. So a poll that ends in 304 moves 32 bytes from
 * Postgres instead of the whole payload, and computes nothing.
 *
 * @example
 * const served = servedSchedules();
 * const { payload } = await served.read(key, async (fingerprint) => (await readSchedulesIfChanged(db, [{ key, fingerprint }]))[0]);
 */
export function servedSchedules(capacity = SERVED_SCHEDULES_KEPT) {
  const fingerprints = new BoundedMap<string, string>({ capacity });
  const payloads = new BoundedMap<string, VersionedPayload>({ capacity });
  return {
    /**
     * Reads `key` through `ask(fingerprint)`; `payload` is null when the answer has no payload (an
     * unknown or unpaired key). Should the payload held for the fingerprint have been dropped
     * meanwhile, it asks once more without one.
     */
    async read<Row extends FingerprintedRow>(key: string, ask: (fingerprint: string | null) => Promise<Row | null>) {
      let row = await ask(fingerprints.get(key) ?? null);
      if (row?.fingerprint && row.body === null && !payloads.has(row.fingerprint)) row = await ask(null);
      if (!row?.fingerprint) return { row, payload: null };
      // Keys of one account share a payload, and equal fingerprints mean equal text: build it once.
      const payload = payloads.get(row.fingerprint) ?? await versionPayload(row.body!);
      payloads.set(row.fingerprint, payload);
      fingerprints.set(key, row.fingerprint);
      return { row, payload };
    },
  };
}
