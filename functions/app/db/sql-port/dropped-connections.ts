import type { Logger } from "../../log.ts";

/** At most one `sql_connections_dropped` line this often, with how many were dropped for each reason since the last. */
export const DROPS_LOG_EVERY_MS = 10_000;
/** Reasons counted apart in one line; the rest are counted as "other" (a flood of made-up user names stays one line). */
const MAX_REASONS = 20;

/**
 * The log of what the SQL port refuses or drops: a malformed packet, a wrong password, a flood
 * past its caps, an accept that failed. The first drop is logged at once with its reason
 * (`sql_connection_dropped`); drops within the next 10 s are counted by reason and logged together
 * (`sql_connections_dropped`), so a flood or a fuzzer costs one line per 10 s, never one per connection.
 *
 * @example
 * const drops = droppedConnections(log);
 * drops.note("invalid length of startup packet");
 */
export function droppedConnections(log: Logger, everyMs = DROPS_LOG_EVERY_MS) {
  const counts = new Map<string, number>();
  let loggedAt = -Infinity;
  let timer: ReturnType<typeof setTimeout> | undefined;

  function flush() {
    timer = undefined;
    if (counts.size === 0) return;
    loggedAt = performance.now();
    log("warn", "sql_connections_dropped", { reasons: Object.fromEntries(counts) });
    counts.clear();
  }

  return {
    note(reason: string) {
      const now = performance.now();
      if (now - loggedAt >= everyMs && !timer) {
        loggedAt = now;
        log("warn", "sql_connection_dropped", { reason });
        return;
      }
      const key = counts.has(reason) || counts.size < MAX_REASONS ? reason : "other";
      counts.set(key, (counts.get(key) ?? 0) + 1);
      timer ??= setTimeout(flush, Math.max(0, loggedAt + everyMs - now));
    },
    /** Logs what is still counted, and stops. */
    close() {
      clearTimeout(timer);
      flush();
    },
  };
}

export type DroppedConnections = ReturnType<typeof droppedConnections>;
