/**
 * The database port: one SQL executor, implemented by PGlite (embedded) and postgres.js.
 * Both run the same SQL; business rules live in SQL functions, so a store call is one statement.
 */
export interface Database {
  /** Runs one statement with positional parameters (`$1`, `$2`, ...) and returns its rows. */
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Runs a script of several statements in one transaction (migrations, seed). */
  script(text: string): Promise<void>;
  close(): Promise<void>;
}

/** A clock reading (epoch milliseconds, as `Deps.now` gives it) as a timestamptz parameter. */
export function sqlTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}
