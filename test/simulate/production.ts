import postgres from "postgres";
import { type PgBouncer, startPgBouncer } from "../support/pgbouncer.ts";
import type { PostgresServer } from "../support/postgres-server.ts";
import { type RedisServer, startRedis } from "../support/redis.ts";
import { type RunningServer, startServer } from "../support/server.ts";
import { migratedDatabase } from "../bench/database.ts";

/** The production configuration on this machine, with handles for its faults and meters. */
export interface Production {
  database: PostgresServer;
  /** The database's name, as the pooler's statistics name it. */
  databaseName: string;
  /** A direct connection (staff edits, as the dashboard makes them; never through the pooler). */
  sql: postgres.Sql;
  /** The database's direct URL (`pooler.through(url)` reaches it as the edge functions do). */
  url: string;
  pooler: PgBouncer;
  redisPort: number;
  /** The server process kiosks reach now. */
  server: RunningServer;
  /** The server processes running now (two while one worker hands over to the next). */
  serverPids(): number[];
  /**
   * A new worker, as Supabase's runtime starts one when the last reaches its wall-clock limit: a
   * new server process (empty caches, no refusals remembered, new pool) becomes `server`; the
   * previous one is returned, still running, for the caller to retire once its requests are done.
   */
  nextWorker(): Promise<RunningServer>;
  /** Stops a server `nextWorker` replaced. */
  retire(previous: RunningServer): Promise<void>;
  /** Stops redis-server and starts it again on the same port, empty (persistence is off). */
  restartRedis(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts what a deployment on Supabase runs, as the bench starts its servers: Postgres 15
 * migrated with the Supabase CLI (then `prepare(sql)` adds data, before anything else connects),
 * PgBouncer in transaction mode in front of it as `SUPABASE_DB_URL`, rate limits in a real
 * redis-server (`REDIS_URL`), the client IP from `cf-connecting-ip` as Supabase's gateway sends
 * it, and the real entry under Deno as `npm start` runs it. `settings` are further Postgres settings.
 */
export async function startProduction(prepare: (sql: postgres.Sql) => Promise<void>, settings: Record<string, string> = {}): Promise<Production> {
  const { url, server: database } = await migratedDatabase(settings);
  const stops: Array<() => Promise<unknown>> = [() => database.stop()];
  const stop = async () => {
    for (const step of stops.reverse()) await step();
  };
  try {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    stops.push(() => sql.end());
    await prepare(sql);
    const pooler = await startPgBouncer(database.port);
    stops.push(() => pooler.stop());
    let redis: RedisServer = await startRedis();
    stops.push(() => redis.stop());
    const redisPort = Number(new URL(redis.url).port);
    // An admin listener of its own (ADMIN_PORT 0: a free port), for the server's own request
    // durations and event-loop delay beside what the kiosks measure.
    const env = { SUPABASE_DB_URL: pooler.through(url), REDIS_URL: redis.url, CLIENT_IP_HEADER: "cf-connecting-ip", ADMIN_PORT: "0" };
    const running = new Set([await startServer(env)]);
    stops.push(() => Promise.all([...running].map((server) => server.stop())));
    const production: Production = {
      database,
      databaseName: new URL(url).pathname.slice(1),
      sql,
      url,
      pooler,
      redisPort,
      server: [...running][0],
      serverPids: () => [...running].map((server) => server.pid),
      async nextWorker() {
        const next = await startServer(env);
        running.add(next);
        const previous = production.server;
        production.server = next;
        return previous;
      },
      async retire(previous) {
        running.delete(previous);
        await previous.stop();
      },
      async restartRedis() {
        await redis.stop();
        redis = await startRedis({ port: redisPort });
      },
      stop,
    };
    return production;
  } catch (error) {
    await stop();
    throw error;
  }
}
