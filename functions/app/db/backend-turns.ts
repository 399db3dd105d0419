/**
 * PGlite runs one Postgres backend. The API's statements and the staff's SQL sessions
 * (db/sql-port.ts) take it in turns, first come first served: a turn is held by one user at a
 * time, so a staff session that keeps its turn through a transaction has no API statement run
 * inside it, and the holder hears when someone else waits (to give the turn back).
 */
export interface BackendTurns {
  /**
   * Waits for the backend; resolves with the function that gives it back (call it once). A wait
   * that `signal` aborts leaves the queue and rejects with the signal's reason: a statement past
   * its deadline, a session's Ctrl-C.
   */
  take(options?: { onContended?: () => void; signal?: AbortSignal }): Promise<() => void>;
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
 * const release = await turns.take({ signal: AbortSignal.timeout(2_000) });
 * try { await run(); } finally { release(); }
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
    take({ onContended, signal } = {}) {
      return new Promise((resolve, reject) => {
        signal?.throwIfAborted();
        const waiter: Waiter = {
          onContended,
          grant: () => {
            signal?.removeEventListener("abort", leave);
            resolve(once(waiter));
          },
        };
        function leave() {
          const index = waiting.indexOf(waiter);
          if (index < 0) return;
          waiting.splice(index, 1);
          reject(signal!.reason);
        }
        if (!holder) {
          holder = waiter;
          waiter.grant();
          return;
        }
        signal?.addEventListener("abort", leave, { once: true });
        waiting.push(waiter);
        holder.onContended?.();
      });
    },
  };
}
