import type { Database, QueryOptions } from "./database.ts";
import { DatabaseBusy, isUnavailable } from "./unavailable.ts";

/**
 * The same database, each statement that fails for want of it told to `onFailure`: shed as
 * back-pressure (`DatabaseBusy`), or unavailable (down, past its deadline, or refused at once while
 * marked down). A statement's own error (a constraint, a bad parameter) is not counted. Wraps the
 * availability layer, so it sees every statement the app sends and what each request got.
 *
 * @example
 * const db = observedDatabase(withAvailability(pool, log), metrics.databaseFailed);
 */
export function observedDatabase(db: Database, onFailure: (kind: "busy" | "unavailable") => void): Database {
  return {
    // A handler on the promise, not an async wrapper: no extra turn on every statement's path.
    query: <Row>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<Row[]> =>
      db.query<Row>(text, params, options).catch((error: unknown) => {
        if (isUnavailable(error)) onFailure(error instanceof DatabaseBusy ? "busy" : "unavailable");
        throw error;
      }),
    script: (text) => db.script(text),
    close: () => db.close(),
  };
}
