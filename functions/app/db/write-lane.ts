import type { Database, QueryOptions } from "./database.ts";
import { DatabaseBusy } from "./unavailable.ts";

/** A write lane at one moment: its slots, those held, and writes waiting for one. */
export interface LaneUse {
  slots: number;
  busy: number;
  waiting: number;
}

/**
 * Connections of the pool a write lane leaves to reads: the schedule, legacy, validation and
 * entitlement reads each run one statement at a time, and rarely all at once.
 */
export const READS_KEPT_CONNECTIONS = 3;

/** The write lane of a pool of `poolSize` connections: all but READS_KEPT_CONNECTIONS, at least one. */
export function writeSlots(poolSize: number, deadlineMs: number): { slots: number; deadlineMs: number } {
  return { slots: Math.max(1, poolSize - READS_KEPT_CONNECTIONS), deadlineMs };
}

/**
 * Kiosk reads are batched, one statement at a time per kind (read-path/), so they need only a
 * few of the pool's connections. Writes were one statement each, and a burst of 2,000 took every
 * connection, and the reads queued behind them went stale; they are batched now too (system names
 * and validations that set one, license/routes.ts), and still go through this lane, which lets at
 * most `slots` statements through it hold a connection at once, so the rest of the pool stays free
 * for reads; a write that would wait for a slot past the deadline is shed (`DatabaseBusy`: a 503
 * with Retry-After, and `database_busy` in the log, never an outage) without taking a connection.
 * Only statements sent with `{ write: true }` (`writesOf`) go through the lane. It sits under the
 * availability layer, which then logs its sheds as it logs a full pool's.
 *
 * @example
 * const db = withAvailability(writeLane(openPostgres(url, { max: 10 }), { slots: 7, deadlineMs: 2_000 }), log);
 * await writesOf(db).query("select n, outcome from cadence.set_system_names($1::text[], $2::text[])", [keys, names]);
 */
export function writeLane(db: Database, options: { slots: number; deadlineMs: number }): Database & { use(): LaneUse } {
  let busy = 0;
  const waiting: Array<() => void> = [];

  function release() {
    const next = waiting.shift();
    if (next) next();
    else busy -= 1;
  }

  function acquire(askedAt: number): Promise<void> {
    if (busy < options.slots) {
      busy += 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const turn = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(turn), 1);
        reject(new DatabaseBusy("every write slot was busy for the whole deadline"));
      }, Math.max(0, options.deadlineMs - (performance.now() - askedAt)));
      waiting.push(turn);
    });
  }

  return {
    async query<Row>(text: string, params?: readonly unknown[], queryOptions?: QueryOptions): Promise<Row[]> {
      if (!queryOptions?.write) return db.query<Row>(text, params, queryOptions);
      const askedAt = queryOptions.askedAt ?? performance.now();
      await acquire(askedAt);
      try {
        // The deadline counts from when the write was asked for: waiting for a slot is part of it.
        return await db.query<Row>(text, params, { ...queryOptions, askedAt });
      } finally {
        release();
      }
    },
    script: (text) => db.script(text),
    close: () => db.close(),
    /** The slots now, for the admin listener's metrics. */
    use: () => ({ slots: options.slots, busy, waiting: waiting.length }),
  };
}

/**
 * The same database, every statement sent as a single write (`{ write: true }`): through the
 * write lane where there is one (`writeLane`), unchanged where there is none.
 *
 * @example
 * const deps = { db, writes: writesOf(db) };
 */
export function writesOf(db: Database): Database {
  return {
    query: (text, params, options) => db.query(text, params, { ...options, write: true }),
    script: (text) => db.script(text),
    close: () => db.close(),
  };
}
