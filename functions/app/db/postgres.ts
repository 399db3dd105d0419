import postgres from "postgres";
import { type Database, DEFAULT_DEADLINE_MS, type QueryOptions } from "./database.ts";
import { arrayLiteral, withValuesInline } from "./sql-literal.ts";
import { DatabaseUnavailable } from "./unavailable.ts";

export interface PostgresOptions {
  /** Pool size. */
  max?: number;
  /**
   * Named prepared statements. Off behind Supabase's transaction pooler (port 6543), which
   * cannot keep them across transactions; each statement then goes with its values written in
   * (`withValuesInline`), in one round trip instead of two.
   */
  prepare?: boolean;
  /**
   * No statement waits longer than this (milliseconds), counted from `QueryOptions.askedAt`; a
   * connection attempt gets as long. Past it the statement is cancelled on the server, its
   * connection replaced, and the caller gets `DatabaseUnavailable`.
   */
  deadlineMs?: number;
}

/**
 * Asks the server to cancel a statement (a CancelRequest on a new connection, as `query.cancel()`
 * sends it), best effort. postgres.js 3.4.9's `cancel()` drops the promise of that request, so a
 * refused connection would surface as an unhandled rejection, which ends a Deno process; its
 * canceller returns the promise, which is caught here.
 */
function cancelOnServer(pending: unknown) {
  const query = pending as { canceller?: ((query: unknown) => Promise<unknown>) | null };
  const canceller = query.canceller;
  if (!canceller) return;
  query.canceller = null;
  canceller(pending).catch(() => {});
}

/**
 * A pool of `max` connections on `url`, each its own single-connection postgres.js client; every
 * statement goes to the client with the fewest statements in flight (a client pipelines what it
 * is given).
 *
 * Why not one postgres.js client with `max` connections: its pool keeps connections in array
 * queues whose `shift` leaves a hole that only a complete drain clears, and whose `remove` scans
 * the holes. Under sustained load the holes never drain, so every statement scans a longer array:
 * measured here, `select 1` at 50 concurrent callers fell from 30k/s to 15k/s within 18 s while
 * the array passed 300k entries, and it keeps falling until the process restarts. A client with
 * one connection drains its queue on every shift, so nothing accumulates.
 *
 * @example
 * const db = openPostgres(process.env.DATABASE_URL, { max: 10 });
 */
export function openPostgres(url: string, options: PostgresOptions = {}): Database {
  const prepare = options.prepare ?? true;
  const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const connect = () => ({
    sql: postgres(url, {
      max: 1,
      prepare,
      onnotice: () => {},
      connection: { application_name: "cadence" },
      connect_timeout: deadlineMs / 1000,
      // Reconnect at once: postgres.js otherwise waits up to 20 s after repeated failures, which
      // kept answers wrong for 14-17 s after a restart. The availability layer paces the retries.
      backoff: () => 0,
      // postgres.js 3.4.9 reads the array types on each new connection, from a promise nobody
      // catches; when that read fails (a pooler that cannot reach its server), the connection
      // serialises arrays wrongly for the rest of its life. Arrays go as text instead (arrayLiteral).
      fetch_types: false,
    }),
    inFlight: 0,
  });
  const clients = Array.from({ length: options.max ?? 10 }, connect);

  /**
   * A connection whose statement outlived its deadline may be stuck (a paused server, a dead
   * peer): it is replaced rather than waited on, and whatever else it carried fails now.
   */
  function replace(stuck: ReturnType<typeof connect>) {
    const at = clients.indexOf(stuck);
    if (at === -1) return;
    clients[at] = connect();
    stuck.sql.end({ timeout: 0 }).catch(() => {});
  }

  async function withClient<T>(work: (client: ReturnType<typeof connect>) => Promise<T>): Promise<T> {
    let client = clients[0];
    for (const candidate of clients) if (candidate.inFlight < client.inFlight) client = candidate;
    client.inFlight++;
    try {
      return await work(client);
    } finally {
      client.inFlight--;
    }
  }

  return {
    query<Row>(text: string, params: readonly unknown[] = [], { askedAt }: QueryOptions = {}) {
      const remaining = askedAt === undefined ? deadlineMs : deadlineMs - (performance.now() - askedAt);
      if (remaining <= 0) return Promise.reject(new DatabaseUnavailable("waited past the deadline"));
      return withClient((client) => {
        const pending = prepare
          ? client.sql.unsafe(text, params.map((value) => Array.isArray(value) ? arrayLiteral(value) : value) as postgres.ParameterOrJSON<never>[])
          : client.sql.unsafe(withValuesInline(text, params), [], { prepare: false });
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            cancelOnServer(pending);
            replace(client);
            reject(new DatabaseUnavailable(`no answer within ${deadlineMs} ms`));
          }, remaining);
        });
        return Promise.race([pending as unknown as Promise<Row[]>, late]).finally(() => clearTimeout(timer));
      });
    },
    script(text: string) {
      return withClient(async ({ sql }) => {
        await sql.begin((tx) => tx.unsafe(text));
      });
    },
    async close() {
      await Promise.all(clients.map((client) => client.sql.end({ timeout: 5 })));
    },
  };
}
