import { authUsersFromConfig } from "./auth-users/auth-users-from-config.ts";
import type { Config } from "./config.ts";
import type { Database } from "./db/database.ts";
import { withAvailability } from "./db/availability.ts";
import { migrate } from "./db/migrate.ts";
import { openPostgres } from "./db/postgres.ts";
import { isUnavailable } from "./db/unavailable.ts";
import type { Deps } from "./deps.ts";
import { edgeRuntimeKeepAlive } from "./edge-runtime.ts";
import { clientIpSource } from "./http/client-ip.ts";
import { importOptional } from "./import-optional.ts";
import { kioskSightings } from "./kiosk/sightings.ts";
import type { Logger } from "./log.ts";
import { errorMessage } from "./log.ts";
import { mailerFromConfig } from "./mail/mailer-from-config.ts";
import { createLimiter } from "./rate-limit/create-limiter.ts";
import { runScheduledPass } from "./scheduled-pass.ts";

/** How often the local server runs the offline alerts and retries queued e-mails that are due. */
export const OUTBOX_SWEEP_MS = 60_000;

function sweepOutbox(deps: Deps) {
  runScheduledPass(deps).catch((error) => {
    // A database outage is logged once, when it starts (db/availability.ts); the next sweep retries.
    if (!isUnavailable(error)) deps.log("error", "outbox_sweep_failed", { error: errorMessage(error) });
  });
}

export interface Runtime {
  deps: Deps;
  /** One line for the start-up log: which database, limiter, mailer and client IP source are in use. */
  describe: Record<string, string>;
  close(): Promise<void>;
}

/**
 * Assembles the ports from the parsed configuration.
 * - `DATABASE_URL`: that Postgres; pending migrations are applied, the seed loaded when it is new.
 * - `SUPABASE_DB_URL` (inside Supabase Edge Functions): the project's database through its
 *   transaction pooler; migrations are `supabase db push`'s job there, and the client IP is
 *   `CF-Connecting-IP` unless `CLIENT_IP_HEADER` says otherwise (http/client-ip.ts).
 * - neither: PGlite in `DATA_DIR`, migrated and seeded like `DATABASE_URL`.
 * A Postgres gets a deadline on every statement (`DATABASE_DEADLINE_MS`) and the availability
 * layer that fails fast while it is down; PGlite runs in this process and cannot be down.
 * Off Supabase, the process itself retries queued e-mails every minute (PGlite's directory admits
 * one process); on Supabase, pg_cron calls the `outbox` function instead.
 */
export async function openRuntime(config: Config, log: Logger): Promise<Runtime> {
  const onSupabase = !config.DATABASE_URL && Boolean(config.SUPABASE_DB_URL);
  let db: Database;
  let database: string;
  const deadlineMs = config.DATABASE_DEADLINE_MS;
  if (config.DATABASE_URL) {
    db = withAvailability(openPostgres(config.DATABASE_URL, { max: 10, deadlineMs }), log);
    database = "postgres (DATABASE_URL)";
  } else if (config.SUPABASE_DB_URL) {
    db = withAvailability(openPostgres(config.SUPABASE_DB_URL, { max: 5, transactionPooler: true, deadlineMs }), log);
    database = "supabase (SUPABASE_DB_URL)";
  } else {
    const { openPglite } = await importOptional<typeof import("./db/pglite.ts")>(new URL("./db/pglite.ts", import.meta.url));
    db = await openPglite(config.DATA_DIR);
    database = `pglite (${config.DATA_DIR})`;
  }
  if (!onSupabase) {
    const report = await migrate(db, { seed: true });
    log("info", "database_ready", { database, migrationsApplied: report.applied.length, seeded: report.seeded });
  }
  const now = Date.now;
  const keepAlive = edgeRuntimeKeepAlive();
  const limiter = await createLimiter(config, log, now, keepAlive);
  const sightings = kioskSightings({ db, now, log, keepAlive });
  const deps: Deps = {
    db,
    limiter: limiter.limiter,
    log,
    now,
    clientIpSource: clientIpSource(config, onSupabase),
    mailer: mailerFromConfig(config),
    signingSecret: config.SIGNING_SECRET,
    signingSecretPrevious: config.SIGNING_SECRET_PREVIOUS,
    sightings,
    authUsers: authUsersFromConfig(config),
  };
  if (!deps.authUsers) {
    log("info", "auth_users_skipped", {
      reason: "no SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY: onboarded accounts get no Supabase Auth user",
    });
  }
  // E-mails a previous run left pending (a crash, a mail outage) go out at start, then every minute.
  if (!onSupabase) sweepOutbox(deps);
  const sweeper = onSupabase ? undefined : setInterval(() => sweepOutbox(deps), OUTBOX_SWEEP_MS);
  return {
    deps,
    describe: { database, limiter: limiter.describe, mailer: config.MAILER, clientIp: deps.clientIpSource ? deps.clientIpSource.name : "socket peer" },
    async close() {
      clearInterval(sweeper);
      await limiter.close();
      // What kiosks were seen doing since the last write: written before the database goes.
      await sightings.close();
      await db.close();
    },
  };
}
