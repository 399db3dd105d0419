/**
 * The database could not answer in time: it is down, restarting, paused, unreachable, or past the
 * statement deadline. Routes answer it with the last known good answer or a 503, never a 500.
 */
export class DatabaseUnavailable extends Error {
  override name = "DatabaseUnavailable";
  constructor(
    /** What happened, for the outage's log line (never per request). */
    readonly reason: string,
  ) {
    super(`database unavailable: ${reason}`);
  }
}

/**
 * Every connection of the pool was busy for the whole deadline: back-pressure, not an outage. The
 * request is shed (a 503 with Retry-After, or its last known good answer), as for an outage, but the
 * database is not declared unavailable for every other request: it is answering, only not to all
 * at once (db/availability.ts logs `database_busy`, never `database_unavailable`, for it).
 */
export class DatabaseBusy extends DatabaseUnavailable {
  override name = "DatabaseBusy";
}

/**
 * SQLSTATE classes and codes that say the server (or the pooler in front of it) cannot serve now,
 * as opposed to a statement that is wrong: 08 connection exception, 53 insufficient resources
 * (too many connections), 57P01-57P05 shutdown, crash, starting up, idle/session timeouts, 57014 a
 * statement cancelled (by our deadline), 58 system error.
 */
const UNAVAILABLE_SQLSTATE = /^(08|53|58|57P0[1-5]$|57014$)/;

/** Socket errors of a connection that was refused, reset or never answered. */
const UNAVAILABLE_ERRNO = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ECONNABORTED",
]);

/**
 * Whether `error` says the database cannot be reached or cannot answer now, rather than that a
 * statement failed on its own merits (a constraint, a bad parameter): only the former may be
 * answered from memory or with a 503. node-postgres names no code for a connection that ended or
 * timed out; db/postgres.ts reports those as `DatabaseUnavailable`.
 */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof DatabaseUnavailable) return true;
  if (typeof error !== "object" || error === null) return false;
  const { code, errno } = error as { code?: unknown; errno?: unknown };
  if (typeof code !== "string") return typeof errno === "string" && UNAVAILABLE_ERRNO.has(errno);
  return UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_ERRNO.has(code);
}
