import { BoundedMap } from "../bounded-map.ts";
import { isUnavailable } from "../db/unavailable.ts";

/** An answer, and its age in whole seconds when it is the last known good one (RFC 9111 `Age`). */
export interface Known<T> {
  value: T;
  /** null: read now. */
  age: number | null;
}

export interface LastKnownGoodOptions<V> {
  /** The most entries kept; the least recently read goes first. */
  capacity: number;
  /** The most bytes of values kept (as `sizeOf` counts them); the least recently read go first. */
  maxBytes: number;
  sizeOf: (value: V) => number;
  /** An entry older than this is never served. Default: however old. */
  maxAgeMs?: number;
  now: () => number;
}

/** Bytes of a map entry besides its value (key, timestamps, the map's own slot), for the bound. */
const ENTRY_OVERHEAD_BYTES = 200;

/**
 * The last good answer of a read, per key: stale-if-error (RFC 5861) for an instance that has
 * read it once. `read` runs `load`; an answer that `keep` accepts is remembered with the time it
 * was read, and one it refuses (a key no longer paired) forgets what was remembered. When `load` fails because the database is unavailable (`isUnavailable`), the answer
 * remembered for the key is served instead with its `age`, if there is one and it is young
 * enough; otherwise the error stands (a 503). Any other error always stands.
 *
 * Bounded: at most `capacity` entries and `maxBytes` of values, least recently read dropped first;
 * the worst case is `capacity` x 200 bytes plus `maxBytes`.
 *
 * @example
 * const schedules = lastKnownGood({ capacity: 10_000, maxBytes: 16 << 20, sizeOf: (body: string) => body.length, now });
 * const { value, age } = await schedules.read(key, () => readSchedule(db, key));
 */
export function lastKnownGood<V>(options: LastKnownGoodOptions<V>) {
  const entries = new BoundedMap<string, { value: V; at: number }>({
    capacity: options.capacity,
    maxBytes: options.maxBytes,
    sizeOf: (entry) => options.sizeOf(entry.value) + ENTRY_OVERHEAD_BYTES,
  });

  return {
    async read(key: string, load: () => Promise<V>, keep: (value: V) => boolean = () => true): Promise<Known<V>> {
      let value: V;
      try {
        value = await load();
      } catch (error) {
        const entry = entries.get(key);
        if (!isUnavailable(error) || !entry) throw error;
        const ageMs = options.now() - entry.at;
        if (options.maxAgeMs !== undefined && ageMs > options.maxAgeMs) throw error;
        return { value: entry.value, age: Math.max(0, Math.floor(ageMs / 1000)) };
      }
      if (keep(value)) entries.set(key, { value, at: options.now() });
      else entries.delete(key);
      return { value, age: null };
    },
  };
}

/** The age of an answer made of two: the older one's, or null when both were read now. */
export function oldest(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.max(a, b);
}
