import pg from "pg";
import { errorMessage } from "../log.ts";
import { type Database, DEFAULT_DEADLINE_MS, type QueryOptions } from "./database.ts";
import { DatabaseBusy, DatabaseUnavailable } from "./unavailable.ts";

export interface PostgresOptions {
  /** Pool size. */
  max?: number;
  /**
   * Behind a transaction pooler (Supabase's port 6543, PgBouncer): statements are unnamed, as the
   * next transaction may run on another server connection, which never parsed a named one; and no
   * session setting is sent at start-up, as a pooler refuses them (PgBouncer: "unsupported startup
   * parameter"). A late statement is then abandoned, not cancelled: its connection is dropped and
   * the server runs it to its end (or to the role's own statement_timeout). Directly, each
   * statement text is parsed once per connection and named.
   */
  transactionPooler?: boolean;
  /**
   * No statement waits longer than this (milliseconds) for its answer, counted from
   * `QueryOptions.askedAt`; getting a connection gets as long. Past it the caller gets
   * `DatabaseUnavailable` and the connection is dropped; directly, the server cancels the statement
   * itself at the same bound (`statement_timeout`).
   */
  deadlineMs?: number;
}

/** A pool's connections at one moment: its size, those open, those idle, and statements waiting for one. */
export interface PoolUse {
  max: number;
  total: number;
  idle: number;
  waiting: number;
}

/**
 * What the driver reports about the connection (refused, ended, timed out: no SQLSTATE) as
 * `DatabaseUnavailable`. A server's error keeps its SQLSTATE, which says itself whether the server
 * can serve (unavailable.ts), except a transaction conflict (`TRANSACTION_CONFLICT`), which is
 * `DatabaseBusy`; a TypeError is a bad argument, not an outage.
 */
function connectionFailure(error: unknown): unknown {
  if (error instanceof pg.DatabaseError && TRANSACTION_CONFLICT.has(error.code ?? "")) {
    return new DatabaseBusy(`the server aborted the statement: ${error.message}`);
  }
  if (error instanceof pg.DatabaseError || error instanceof TypeError) return error;
  // pg-pool's one error for a request that queued for a connection of a full pool past
  // connectionTimeoutMillis (pg-pool/index.js); a new connection that cannot be opened in time
  // is "Connection terminated due to connection timeout", an outage.
  if (errorMessage(error) === POOL_WAIT_TIMEOUT) return new DatabaseBusy("every pool connection was busy for the whole deadline");
  return new DatabaseUnavailable(errorMessage(error));
}

const POOL_WAIT_TIMEOUT = "timeout exceeded when trying to connect";
/**
 * SQLSTATEs of a statement the server aborted because of other transactions, not its own fault:
 * 40P01 deadlock_detected (a cycle of lock waits) and 40001 serialization_failure. Asked again it
 * may succeed, so it is shed alone (a 503 with Retry-After), as contention, never a 500 and never
 * an outage for every other request.
 */
const TRANSACTION_CONFLICT = new Set(["40P01", "40001"]);
/** node-postgres's error when a statement's query_timeout passes (pg/lib/client.js). */
const QUERY_TIMEOUT = "Query read timeout";

/**
 * A node-postgres pool of `max` connections on `url`. Every value is a bind parameter, never
 * statement text: node-postgres writes Parse, Bind, Describe, Execute and Sync at once, so a
 * statement costs one round trip, unnamed through a transaction pooler too. Arrays go as Postgres
 * array text, which node-postgres writes itself.
 *
 * @example
 * const db = openPostgres(config.DATABASE_URL, { max: 10 });
 */
export function openPostgres(url: string, options: PostgresOptions = {}): Database & { use(): PoolUse } {
  const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const max = options.max ?? 10;
  const pool = new pg.Pool({
    connectionString: url,
    max,
    application_name: "cadence",
    connectionTimeoutMillis: deadlineMs,
    // Idle connections stay open: a kiosk's request should not wait for a new one.
    idleTimeoutMillis: 0,
    ...(options.transactionPooler ? {} : { statement_timeout: deadlineMs }),
  });
  /**
   * Each statement text's name on direct connections: parsed and planned once per connection, a
   * statement then answers in 0.12-0.61 ms instead of 0.21-0.72 (measured here on the kiosk reads
   * and the validation). A statement that fails drops its connection (pg.Pool does), and with it
   * what it had parsed, so one whose result type a migration changed is parsed again afterwards.
   */
  const names = new Map<string, string>();
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (name === undefined) names.set(text, (name = `cadence_${names.size}`));
    return name;
  };
  // A connection lost while idle (a restart, a pooler gone) is dropped by the pool and reported
  // here; the next statement opens a new one, and the availability layer logs the outage.
  pool.on("error", () => {});

  return {
    async query<Row>(text: string, params: readonly unknown[] = [], { askedAt }: QueryOptions = {}) {
      const remaining = askedAt === undefined ? deadlineMs : deadlineMs - (performance.now() - askedAt);
      // Its whole deadline went waiting in this process (behind a batch that waited for the pool):
      // back-pressure here, nothing the database said.
      if (remaining <= 0) throw new DatabaseBusy("waited past the deadline before it was sent");
      // node-postgres reads a statement's own query_timeout (lib/client.js, `config.query_timeout ||
      // this.connectionParameters.query_timeout`); @types/pg 8.23.1 does not declare it.
      const statement: pg.QueryConfig & { query_timeout: number } = {
        text,
        values: params as unknown[],
        query_timeout: Math.ceil(remaining),
        ...(options.transactionPooler ? {} : { name: nameOf(text) }),
      };
      try {
        const result = await pool.query(statement);
        return result.rows as Row[];
      } catch (error) {
        // Sent with less than half its deadline left (it waited in this process behind batches) and
        // out of time: the database did not get a fair bound to answer in, so this is back-pressure,
        // shed alone, not an outage. A statement sent with most of its deadline still decides that.
        if (errorMessage(error) === QUERY_TIMEOUT && remaining < deadlineMs / 2) {
          throw new DatabaseBusy("ran out of the deadline its wait in this process left it");
        }
        throw connectionFailure(error);
      }
    },
    async script(text: string) {
      const client = await pool.connect().catch((error) => Promise.reject(connectionFailure(error)));
      // A checked-out client reports a lost connection as an 'error' event, which must be heard.
      const lost = () => {};
      client.on("error", lost);
      try {
        await client.query("begin");
        // A migration may take longer than a kiosk's statement.
        await client.query("set local statement_timeout = 0");
        await client.query(text);
        await client.query("commit");
        client.release();
      } catch (error) {
        client.release(error as Error);
        throw connectionFailure(error);
      } finally {
        client.removeListener("error", lost);
      }
    },
    close: () => pool.end(),
    /** The pool's connections now, for the admin listener's metrics. */
    use: () => ({ max, total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
}
