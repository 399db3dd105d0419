import type { Config } from "./config.ts";
import type { Database } from "./db/database.ts";
import { migrate } from "./db/migrate.ts";
import { openPglite } from "./db/pglite.ts";
import { openPostgres } from "./db/postgres.ts";
import type { Deps } from "./deps.ts";
import type { Logger } from "./log.ts";
import { memoryLimiter } from "./rate-limit/memory.ts";

export interface Runtime {
  deps: Deps;
  /** One line for the start-up log: which database, limiter and mailer are in use. */
  describe: Record<string, string>;
  close(): Promise<void>;
}

/**
 * Assembles the ports from the parsed configuration.
 * - `DATABASE_URL`: that Postgres; pending migrations are applied, the seed loaded when it is new.
 * - `SUPABASE_DB_URL` (inside Supabase Edge Functions): the project's database through its
 *   transaction pooler; migrations are `supabase db push`'s job there, and the platform's
 *   X-Forwarded-For is always trusted.
 * - neither: PGlite in `DATA_DIR`, migrated and seeded like `DATABASE_URL`.
 */
export async function openRuntime(config: Config, log: Logger): Promise<Runtime> {
  const onSupabase = !config.DATABASE_URL && Boolean(config.SUPABASE_DB_URL);
  let db: Database;
  let database: string;
  if (config.DATABASE_URL) {
    db = openPostgres(config.DATABASE_URL, { max: 10 });
    database = "postgres (DATABASE_URL)";
  } else if (config.SUPABASE_DB_URL) {
    db = openPostgres(config.SUPABASE_DB_URL, { max: 5, prepare: false });
    database = "supabase (SUPABASE_DB_URL)";
  } else {
    db = await openPglite(config.DATA_DIR);
    database = `pglite (${config.DATA_DIR})`;
  }
  if (!onSupabase) {
    const report = await migrate(db, { seed: true });
    log("info", "database_ready", { database, migrationsApplied: report.applied.length, seeded: report.seeded });
  }
  const now = Date.now;
  return {
    deps: { db, limiter: memoryLimiter(now), log, now, trustProxy: config.TRUST_PROXY || onSupabase },
    describe: { database, limiter: "memory" },
    close: () => db.close(),
  };
}
