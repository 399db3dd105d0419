import { type PgBouncer, startPgBouncer } from "../support/pgbouncer.ts";
import { type RedisServer, startRedis } from "../support/redis.ts";
import { billedRedisCommands } from "./redis-commands.ts";

/**
 * The deployments the benchmark compares, each the real entry on the same database:
 * - `memory`: rate limits in memory, Postgres direct (`DATABASE_URL`): what `npm start` runs;
 * - `redis`: rate limits in a real redis-server started here (`REDIS_URL`), as several instances
 *   sharing their limits would, Postgres direct;
 * - `pooler`: Postgres through PgBouncer in transaction mode (`SUPABASE_DB_URL`, no prepared
 *   statements), as the edge function reaches it on Supabase; limits in memory.
 */
export type ConfigurationName = "memory" | "redis" | "pooler";
export const CONFIGURATIONS: ConfigurationName[] = ["memory", "redis", "pooler"];

/** What a configuration is measured against (in the same run), and the share it must reach. */
export const COMPARED: Record<ConfigurationName, { against: ConfigurationName; target: number; p99Ms?: number } | undefined> = {
  memory: undefined,
  redis: { against: "memory", target: 0.85, p99Ms: 12 },
  pooler: { against: "memory", target: 0.8 },
};

export interface Configuration {
  name: ConfigurationName;
  /** The entry's environment. */
  env: Record<string, string>;
  /** Commands Redis has run so far, those its scripts ran included (what Upstash bills), for commands per 1,000 requests. */
  redisCommands?: () => Promise<number>;
  stop(): Promise<void>;
}

/** Starts what `name` needs beside the database at `url` (whose cluster listens on `port`). */
export async function openConfiguration(name: ConfigurationName, url: string, port: number): Promise<Configuration> {
  // wrk sends every request from its own X-Forwarded-For: the limiter runs on each, never refusing one.
  const direct = { DATABASE_URL: url, TRUST_PROXY: "true" };
  if (name === "redis") {
    const redis: RedisServer = await startRedis();
    const redisPort = Number(new URL(redis.url).port);
    return { name, env: { ...direct, REDIS_URL: redis.url }, redisCommands: () => billedRedisCommands(redisPort), stop: () => redis.stop() };
  }
  if (name === "pooler") {
    const pooler: PgBouncer = await startPgBouncer(port);
    return {
      name,
      env: { SUPABASE_DB_URL: pooler.through(url), CLIENT_IP_HEADER: "x-forwarded-for" },
      stop: () => pooler.stop(),
    };
  }
  return { name, env: direct, stop: () => Promise.resolve() };
}
