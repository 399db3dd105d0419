import { SIGHTINGS_FLUSH_MS } from "../config.ts";
import type { Database } from "../db/database.ts";
import { isUnavailable } from "../db/unavailable.ts";
import type { Logger } from "../log.ts";
import { errorMessage } from "../log.ts";
import { pollNetwork } from "./poll-network.ts";
import { type Burst, firstSighting, recordSightings, type Sighting } from "./store.ts";

/** A key is written at most this often by one instance; `kiosk_status` says online for the account's offline_alert_after (at least a minute). */
export const SIGHTING_PER_KEY_MS = 30_000;
/** Keys held between writes; a fleet larger than this in one interval loses the excess's sightings. */
export const SIGHTINGS_KEPT = 100_000;
/**
 * Calls of one key less than this apart are one poll (a burst): a kiosk's calls of one poll are
 * answered within a second or two of each other, a second device's poll comes at its own moment
 * (supabase/README.md, "Seat checks"). The write sends it, so the database merges bursts across
 * writes with the same gap.
 */
export const POLL_GAP_MS = 5_000;
/**
 * Bursts counted per key between writes. A kiosk makes one or two in the 30 s between writes, two
 * devices two to four; a key called past this (a flood, or anyone who knows a key) extends its last
 * burst, so an entry and a write stay bounded.
 */
export const BURSTS_KEPT_PER_KEY = 8;

/** What a route tells of one answered call, beside the key and the client IP. */
export interface KioskCall {
  /** The schedule version the kiosk holds, when the answer carried one. */
  version?: string;
  /** The system name it wrote (a system-name write). */
  systemName?: string;
  /** A call kiosks make when they start: a license validation, a system-name write. */
  starting?: boolean;
}

/** What a route tells: a kiosk called with `key`, answered successfully. */
export interface KioskSightings {
  /**
   * Notes a call from `ip` (null: unknown) and what it told (`call`). A map update: the write
   * happens later, off the request path.
   */
  saw(key: string, ip: string | null, call?: KioskCall): void;
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
 * later write. Each key's entry also keeps what the seat checks read (its calls in bursts, each a
 * first and last call, whether it was a kiosk starting and the tag of its network, and the system
 * names it wrote); that rides on the same write.
 * While the database is unavailable the sightings are kept for the next write; a crash loses what
 * was not yet written.
 *
 * @example
 * const sightings = kioskSightings({ db, now: Date.now, log });
 * sightings.saw("DEMO-0000-0000-0001", "203.0.113.7", { version });
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
      await recordSightings(db, due, POLL_GAP_MS);
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
    saw(key, ip, call = {}) {
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
      count(sighting, now(), ip, call);
      sighting.at = now();
      sighting.ip = ip;
      if (call.version !== undefined) sighting.version = call.version;
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
 * Counts one call from `ip` into a key's entry: into its last burst when less than `POLL_GAP_MS`
 * after that burst's last call, else into a new one; and a written name other than the last is a change.
 */
function count(sighting: Sighting, at: number, ip: string | null, call: KioskCall) {
  addToBurst(sighting.bursts, { first: at, last: at, starting: call.starting === true, network: pollNetwork(ip) });
  if (call.systemName !== undefined) {
    if (sighting.lastName !== null && sighting.lastName !== call.systemName) sighting.nameChanges += 1;
    sighting.firstName ??= call.systemName;
    sighting.lastName = call.systemName;
  }
}

/**
 * Adds `burst` (the latest yet) to `bursts`: merged into the last when within the poll gap, or past
 * the bound; a burst of calls from two networks is of none (two WAN links balanced per call).
 */
function addToBurst(bursts: Burst[], burst: Burst) {
  const last = bursts.at(-1);
  if (last && (burst.first - last.last <= POLL_GAP_MS || bursts.length >= BURSTS_KEPT_PER_KEY)) {
    last.last = Math.max(last.last, burst.last);
    last.starting ||= burst.starting;
    if (last.network !== burst.network) last.network = null;
  } else {
    bursts.push(burst);
  }
}

/** Folds an entry a failed write carried (`older`) into the entry seen since (`newer`). */
function merge(older: Sighting, newer: Sighting) {
  if (newer.version === null) newer.version = older.version;
  if (older.lastName !== null && newer.firstName !== null && older.lastName !== newer.firstName) newer.nameChanges += 1;
  newer.nameChanges += older.nameChanges;
  newer.firstName = older.firstName ?? newer.firstName;
  newer.lastName ??= older.lastName;
  const bursts: Burst[] = [];
  for (const burst of [...older.bursts, ...newer.bursts]) addToBurst(bursts, { ...burst });
  newer.bursts = bursts;
}
