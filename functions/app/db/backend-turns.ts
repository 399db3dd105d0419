/**
 * PGlite runs one Postgres backend in this process. The API's statements and the staff's SQL
 * sessions (db/sql-port.ts) take it in turns, first come first served: a turn is held by one
 * user at a time, so a staff session that keeps its turn through a transaction has no API
 * statement run inside it, and the holder hears when someone else waits (to give the turn back).
 */
export interface BackendTurns {
  /** Waits for the backend; resolves with the function that gives it back (call it once). */
  take(onContended?: () => void): Promise<() => void>;
}

interface Waiter {
  grant: () => void;
  onContended?: () => void;
}

/**
 * The turns of one PGlite instance: a queue, first come first served.
 *
 * @example
 * const turns = backendTurns();
 * const release = await turns.take();
 * try { await pg.query("select 1"); } finally { release(); }
 */
export function backendTurns(): BackendTurns {
  const waiting: Waiter[] = [];
  let holder: Waiter | undefined;

  function once(waiter: Waiter) {
    let released = false;
    return () => {
      if (released || holder !== waiter) return;
      released = true;
      next();
    };
  }

  function next() {
    holder = waiting.shift();
    if (!holder) return;
    holder.grant();
    if (waiting.length > 0) holder.onContended?.();
  }

  return {
    take(onContended) {
      return new Promise((resolve) => {
        const waiter: Waiter = { onContended, grant: () => resolve(once(waiter)) };
        if (!holder) {
          holder = waiter;
          waiter.grant();
          return;
        }
        waiting.push(waiter);
        holder.onContended?.();
      });
    },
  };
}
