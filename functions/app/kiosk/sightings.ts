import { SIGHTINGS_FLUSH_MS } from "../config.ts";
import type { Database } from "../db/database.ts";
import { isUnavailable } from "../db/unavailable.ts";
import type { Logger } from "../log.ts";
import { errorMessage } from "../log.ts";
import { rateLimitClient } from "../ip-address.ts";
import { firstSighting, recordSightings, type Sighting } from "./store.ts";

/** A key is written at most this often by one instance; `kiosk_status` says online for the account's offline_alert_after (at least a minute). */
export const SIGHTING_PER_KEY_MS = 30_000;
/** Keys held between writes; a fleet larger than this in one interval loses the excess's sightings. */
export const SIGHTINGS_KEPT = 100_000;
/**
 * Networks counted per key between writes. One kiosk calls from one network, a copied key from two
 * or three; a key called from more in one interval is counted past this in `calls` only. Unbounded,
 * a key polled from a new address on every request (a benchmark's, or anyone who knows a key) grew
 * its entry and each write by a row per request: the bench's schedule reads went from a p99 of
 * 11 ms to 1,063 ms.
 */
export const NETWORKS_KEPT_PER_KEY = 8;

/** What a route tells: a kiosk called with `key`, answered successfully. */
export interface KioskSightings {
  /**
   * Notes a call from `ip` (null: unknown), holding schedule `version` when the answer carried one,
   * and the `systemName` it wrote, for a system-name write. A map update: the write happens later,
   * off the request path.
   */
  saw(key: string, ip: string | null, version?: string, systemName?: string): void;
}

/** The writer behind `KioskSightings`: the runtime flushes it at shutdown. */
export interface SightingsWriter extends KioskSightings {
  /** Writes every sighting due now (each key at most once per `perKeyMs`) in one statement. */
  flush(): Promise<void>;
  /** Stops the timer and writes what is still held, however recently its key was written. */
  close(): Promise<void>;
  /** The keys whose sightings are held for the next write. */
  held(): number;
}

export interface SightingsOptions {
  db: Database;
  now: () => number;
  log: Logger;
  /** On Supabase, `EdgeRuntime.waitUntil`: keeps the worker alive until a scheduled write is done. */
  keepAlive?: (work: Promise<unknown>) => void;
  flushEveryMs?: number;
  perKeyMs?: number;
  capacity?: number;
}

/**
 * Coalesces kiosk sightings per instance and writes them off the request path: the first sighting
 * after a write schedules the next one `flushEveryMs` later, which carries every key seen since
 * (the latest call of each), in one statement. A key written less than `perKeyMs` ago waits for a
 * later write. Each key's entry also counts what the seat checks read (its calls, per network: an
 * IPv4 address or an IPv6 /64, and the system names it wrote); those counts ride on the same write.
 * While the database is unavailable the sightings are kept for the next write; a crash loses what
 * was not yet written.
 *
 * @example
 * const sightings = kioskSightings({ db, now: Date.now, log });
 * sightings.saw("DEMO-0000-0000-0001", "203.0.113.7", version);
 */
export function kioskSightings(options: SightingsOptions): SightingsWriter {
  const { db, now, log, keepAlive } = options;
  const flushEveryMs = options.flushEveryMs ?? SIGHTINGS_FLUSH_MS;
  const perKeyMs = options.perKeyMs ?? SIGHTING_PER_KEY_MS;
  const capacity = options.capacity ?? SIGHTINGS_KEPT;
  /** The latest sighting of each key not yet written. */
  const pending = new Map<string, Sighting>();
  /** When each key was last written, oldest first, for the keys written within `perKeyMs`. */
  const written = new Map<string, number>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> = Promise.resolve();
  let dropped = 0;

  /** Puts back what a failed write carried, under anything seen since. */
  function keep(key: string, sighting: Sighting) {
    const since = pending.get(key);
    if (!since) pending.set(key, sighting);
    else merge(sighting, since);
  }

  async function write(everything: boolean) {
    const at = now();
    for (const [key, writtenAt] of written) {
      if (at - writtenAt < perKeyMs) break;
      written.delete(key);
    }
    const due = [...pending].filter(([key]) => everything || !written.has(key));
    if (dropped > 0) {
      log("warn", "kiosk_sightings_dropped", { sightings: dropped, kept: capacity });
      dropped = 0;
    }
    if (due.length === 0) return;
    for (const [key] of due) pending.delete(key);
    try {
      await recordSightings(db, due);
      for (const [key] of due) {
        written.delete(key);
        written.set(key, at);
      }
    } catch (error) {
      // An outage is logged once where it is detected (db/availability.ts); keep them for later.
      if (isUnavailable(error)) for (const [key, sighting] of due) keep(key, sighting);
      else log("error", "kiosk_sightings_failed", { keys: due.length, error: errorMessage(error) });
    }
  }

  /** One write at a time: a flush asked for while one runs goes after it. */
  function enqueue(everything: boolean): Promise<void> {
    running = running.then(() => write(everything));
    return running;
  }

  /** Settles the promise handed to `keepAlive` for the write scheduled last, should close cancel it. */
  let settleScheduled: (() => void) | undefined;

  function schedule() {
    if (timer !== undefined) return;
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    settleScheduled = settle;
    timer = setTimeout(() => {
      timer = undefined;
      enqueue(false).then(() => {
        settle();
        if (pending.size > 0) schedule();
      });
    }, flushEveryMs);
    keepAlive?.(done);
  }

  return {
    saw(key, ip, version, systemName) {
      let sighting = pending.get(key);
      if (!sighting) {
        if (pending.size >= capacity) {
          dropped += 1;
          schedule();
          return;
        }
        sighting = firstSighting(now(), ip);
        pending.set(key, sighting);
      }
      count(sighting, now(), ip, systemName);
      sighting.at = now();
      sighting.ip = ip;
      if (version !== undefined) sighting.version = version;
      schedule();
    },
    flush: () => enqueue(false),
    held: () => pending.size,
    async close() {
      clearTimeout(timer);
      timer = undefined;
      await enqueue(true);
      settleScheduled?.();
    },
  };
}

/**
 * Counts one call into a key's entry: a call back on a network after a call from another network
 * of the same family is a return (the seat checks' interleaving evidence; a dual-stack kiosk
 * switching families makes none), and a written name other than the last is a change.
 */
function count(sighting: Sighting, at: number, ip: string | null, systemName: string | undefined) {
  sighting.calls += 1;
  if (ip !== null) {
    const network = rateLimitClient(ip, 64);
    const family = network.includes(":") ? "v6" : "v4";
    const calls = sighting.networks.get(network);
    if (calls) {
      const previous = sighting.lastNetworkOf[family];
      if (previous !== null && previous !== network) calls.returns += 1;
      calls.last = at;
      calls.calls += 1;
    } else if (sighting.networks.size < NETWORKS_KEPT_PER_KEY) {
      sighting.networks.set(network, { first: at, last: at, calls: 1, returns: 0 });
    }
    sighting.lastNetworkOf[family] = network;
  }
  if (systemName !== undefined) {
    if (sighting.lastName !== null && sighting.lastName !== systemName) sighting.nameChanges += 1;
    sighting.firstName ??= systemName;
    sighting.lastName = systemName;
  }
}

/** Folds an entry a failed write carried (`older`) into the entry seen since (`newer`). */
function merge(older: Sighting, newer: Sighting) {
  if (newer.version === null) newer.version = older.version;
  newer.calls += older.calls;
  if (older.lastName !== null && newer.firstName !== null && older.lastName !== newer.firstName) newer.nameChanges += 1;
  newer.nameChanges += older.nameChanges;
  newer.firstName = older.firstName ?? newer.firstName;
  newer.lastName ??= older.lastName;
  for (const [network, calls] of older.networks) {
    const since = newer.networks.get(network);
    if (!since) {
      if (newer.networks.size < NETWORKS_KEPT_PER_KEY) newer.networks.set(network, calls);
    } else {
      since.first = Math.min(since.first, calls.first);
      since.last = Math.max(since.last, calls.last);
      since.calls += calls.calls;
      since.returns += calls.returns;
    }
  }
}
