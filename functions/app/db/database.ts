/**
 * The database port: one SQL executor, implemented by node-postgres (db/postgres.ts) for every
 * database; business rules live in SQL functions, so a store call is one statement.
 */
export interface Database {
  /** Runs one statement with positional parameters (`$1`, `$2`, ...) and returns its rows. */
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<Row[]>;
  /** Runs a script of several statements in one transaction (migrations, seed). */
  script(text: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * The default bound on a statement, from when it was asked for to its answer: a kiosk gets an
 * answer (fresh, last known good, or a 503) within about 2 s whatever the database does.
 */
export const DEFAULT_DEADLINE_MS = 2_000;

export interface QueryOptions {
  /**
   * When the statement's oldest caller asked for it (`performance.now()`), if it waited before
   * being sent (a batch behind a running statement): the deadline counts from then, so waiting
   * and running together stay within one bound. Default: now.
   */
  askedAt?: number;
  /** A single write, which may hold only the connections a write lane allows (db/write-lane.ts). */
  write?: boolean;
}

/** A clock reading (epoch milliseconds, as `Deps.now` gives it) as a timestamptz parameter. */
export function sqlTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}
