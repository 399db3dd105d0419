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
  server: RunningServer;
  /** Stops redis-server and starts it again on the same port, empty (persistence is off). */
  restartRedis(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts what a deployment on Supabase runs, as the bench starts its servers: Postgres 15
 * migrated with the Supabase CLI (then `prepare(sql)` adds data, before anything else connects),
 * PgBouncer in transaction mode in front of it as `SUPABASE_DB_URL`, rate limits in a real
 * redis-server (`REDIS_URL`), the client IP from `cf-connecting-ip` as Supabase's gateway sends
 * it, and the real entry under Deno as `npm start` runs it.
 */
export async function startProduction(prepare: (sql: postgres.Sql) => Promise<void>): Promise<Production> {
  const { url, server: database } = await migratedDatabase();
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
    const server = await startServer({ SUPABASE_DB_URL: pooler.through(url), REDIS_URL: redis.url, CLIENT_IP_HEADER: "cf-connecting-ip" });
    stops.push(() => server.stop());
    return {
      database,
      databaseName: new URL(url).pathname.slice(1),
      sql,
      url,
      pooler,
      redisPort,
      server,
      async restartRedis() {
        await redis.stop();
        redis = await startRedis({ port: redisPort });
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
