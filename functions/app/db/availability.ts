import type { Logger } from "../log.ts";
import { errorMessage } from "../log.ts";
import type { Database, QueryOptions } from "./database.ts";
import { DatabaseBusy, DatabaseUnavailable, isUnavailable } from "./unavailable.ts";

/** How often a database found unavailable is probed; recovery is seen within this of it answering. */
export const PROBE_EVERY_MS = 250;

/** At most one `database_busy` line this often, with how many requests were shed since the last. */
export const BUSY_LOG_EVERY_MS = 10_000;

/**
 * The one place that decides whether the database is answering. A statement that fails because
 * the database cannot be reached or did not answer within its deadline marks it unavailable: one
 * log line, then every statement fails at once with `DatabaseUnavailable` (so a fleet's requests
 * get the last known good answer or a 503 at once instead of each waiting out the deadline), while
 * a probe (`select 1`) runs every `probeEveryMs`. The first probe that answers marks it available
 * again: one log line, with how long it was down. Errors of a statement itself (a constraint, a
 * bad parameter) pass through unchanged and change nothing. A statement that found every pool
 * connection busy for its whole deadline (`DatabaseBusy`, a burst) is shed alone: the database is
 * answering, so nothing is marked, and `database_busy` is logged at most every 10 s with the count.
 *
 * @example
 * const db = withAvailability(openPostgres(url), log);
 */
export function withAvailability(inner: Database, log: Logger, probeEveryMs = PROBE_EVERY_MS): Database & { available(): boolean } {
  let downSince: number | null = null;
  let lastError = "";
  let probe: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  let shed = 0;
  let busyLoggedAt = -Infinity;

  function noteBusy() {
    shed += 1;
    const now = performance.now();
    if (now - busyLoggedAt < BUSY_LOG_EVERY_MS) return;
    busyLoggedAt = now;
    log("warn", "database_busy", { shed });
    shed = 0;
  }

  function markDown(error: unknown) {
    if (downSince !== null) return;
    downSince = performance.now();
    lastError = errorMessage(error);
    log("error", "database_unavailable", { error: lastError });
    probe = setTimeout(probeOnce, probeEveryMs);
  }

  async function probeOnce() {
    try {
      await inner.query("select 1");
      log("info", "database_available", { downForMs: Math.round(performance.now() - downSince!) });
      downSince = null;
    } catch {
      if (!closed) probe = setTimeout(probeOnce, probeEveryMs);
    }
  }

  return {
    async query<Row>(text: string, params?: readonly unknown[], options?: QueryOptions) {
      if (downSince !== null) throw new DatabaseUnavailable(lastError);
      try {
        return await inner.query<Row>(text, params, options);
      } catch (error) {
        if (!isUnavailable(error)) throw error;
        if (error instanceof DatabaseBusy) {
          noteBusy();
          throw error;
        }
        markDown(error);
        throw error instanceof DatabaseUnavailable ? error : new DatabaseUnavailable(errorMessage(error));
      }
    },
    script: (text) => inner.script(text),
    /** Whether statements go to the database now (false while it is marked unavailable). */
    available: () => downSince === null,
    close() {
      closed = true;
      clearTimeout(probe);
      return inner.close();
    },
  };
}
