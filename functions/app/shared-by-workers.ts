import type { Config } from "./config.ts";
import { ConfigError } from "./config-error.ts";

/**
 * Refuses a configuration that several workers of one machine cannot share: each worker is an
 * isolate of its own, so a rate limit kept in memory would count each worker's requests alone
 * (n workers, n times the limit), and the local default database belongs to the one process that
 * started it in DATA_DIR. Caches need no such
 * rule: each worker's are checked against Postgres or live 5 s, as each edge instance's do.
 *
 * @example
 * refuseUnshared(config, 4); // throws unless the limits are in Redis or Upstash and the database is Postgres
 */
export function refuseUnshared(config: Config, workers: number): void {
  if (workers <= 1) return;
  const problems: string[] = [];
  if (!config.REDIS_URL && !config.UPSTASH_REDIS_REST_URL) {
    problems.push(`DENO_JOBS: ${workers} workers need their rate limits in Redis: set REDIS_URL or UPSTASH_REDIS_REST_URL, or DENO_JOBS=1`);
  }
  if (!config.DATABASE_URL && !config.SUPABASE_DB_URL) {
    problems.push(`DENO_JOBS: ${workers} workers need a database they share (the local default belongs to one process): set DATABASE_URL, or DENO_JOBS=1`);
  }
  if (problems.length > 0) throw new ConfigError(`invalid configuration\n  ${problems.join("\n  ")}`);
}
