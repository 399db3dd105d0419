import { observedDatabase } from "./db/observed-database.ts";
import { observedLimiter } from "./rate-limit/observed-limiter.ts";
import { authUsersFromConfig } from "./auth-users/auth-users-from-config.ts";
import { type Config, DEFAULT_SQL_PORT } from "./config.ts";
import type { Database } from "./db/database.ts";
import { explainDatabaseUrl, neverMigrated } from "./db/database-url-refusal.ts";
import type { LocalPostgres } from "./db/local-postgres.ts";
import { type LaneUse, writeLane, writeSlots, writesOf } from "./db/write-lane.ts";
import { withAvailability } from "./db/availability.ts";
import { everMigrated, migrate, pendingMigrations } from "./db/migrate.ts";
import { openPostgres, type PoolUse } from "./db/postgres.ts";
import { isUnavailable } from "./db/unavailable.ts";
import type { Deps } from "./deps.ts";
import { edgeRuntimeKeepAlive, onEdgeRuntime } from "./edge-runtime.ts";
import { followEvents } from "./events/follow-events.ts";
import { clientIpSource, describeClientIp, everyAddressWarning } from "./http/client-ip.ts";
import { importOptional } from "./import-optional.ts";
import { kioskSightings } from "./kiosk/sightings.ts";
import type { Logger } from "./log.ts";
import { errorMessage } from "./log.ts";
import { mailerFromConfig } from "./mail/mailer-from-config.ts";
import { createLimiter } from "./rate-limit/create-limiter.ts";
import { runScheduledPass } from "./scheduled-pass.ts";
import { settingOverrides } from "./setting-overrides.ts";
import { venueAllowances } from "./venues/venue-allowances.ts";

/** How often the local server runs the offline alerts and retries queued e-mails that are due. */
export const OUTBOX_SWEEP_MS = 60_000;

function sweepOutbox(deps: Deps, signal: AbortSignal): Promise<void> {
  return runScheduledPass(deps, { signal }).then(
    () => {},
    (error) => {
      // A database outage is logged once, when it starts (db/availability.ts); the next sweep retries.
      if (!isUnavailable(error)) deps.log("error", "outbox_sweep_failed", { error: errorMessage(error) });
    },
  );
}

/** What the runtime holds, read at each scrape of the admin listener's metrics. */
export interface RuntimeUsage {
  pool?: () => PoolUse;
  writeLane?: () => LaneUse;
  /** Whether the availability layer takes the database as answering (db/availability.ts). */
  databaseAvailable?: () => boolean;
  /** The keys whose kiosk sightings are held for the next write (kiosk/sightings.ts). */
  sightingsHeld: () => number;
}

/** Told of the failures the admin listener's metrics count, where they happen. */
export interface RuntimeObservers {
  /** A statement shed as back-pressure (`busy`) or failed for want of the database (`unavailable`). */
  databaseFailed(kind: "busy" | "unavailable"): void;
  /** A rate-limit check its store could not answer, by rule. */
  limiterUnavailable(rule: string): void;
}

export interface Runtime {
  deps: Deps;
  /** One line for the start-up log: which database, limiter, mailer and client IP source are in use. */
  describe: Record<string, string>;
  usage: RuntimeUsage;
  /**
   * Where the server does not migrate (`SUPABASE_DB_URL`): this checkout's migrations the database
   * has not recorded yet. Absent where the start applied them itself.
   */
  pendingMigrations?: () => Promise<string[]>;
  close(): Promise<void>;
}

/**
 * Assembles the ports from the parsed configuration.
 * - `DATABASE_URL`: that Postgres; pending migrations are applied, the seed loaded when it is new.
 * - `SUPABASE_DB_URL` (inside Supabase Edge Functions): the project's database through its
 *   transaction pooler; migrations are `supabase db push`'s job there, and the client IP is
 *   `CF-Connecting-IP` unless `CLIENT_IP_HEADER` says otherwise (http/client-ip.ts).
 * - neither: PostgreSQL 15 in `DATA_DIR`, started for this process alone (db/local-postgres.ts),
 *   then reached, migrated and seeded exactly as `DATABASE_URL` is; staff reach it with psql on
 *   `SQL_PORT` (loopback only), as a role whose sessions never starve the API's.
 * Off the Edge Runtime a client-IP header is believed only from `TRUSTED_PROXIES`; a list that
 * holds every address is named at start in one warning line (http/client-ip.ts).
 * Every database gets a deadline on every statement (`DATABASE_DEADLINE_MS`) and the availability
 * layer that fails fast while it is down. Off Supabase, the process itself retries queued e-mails
 * every minute and delivers events as they are recorded (events/follow-events.ts); on Supabase,
 * pg_cron calls the `outbox` function instead.
 */
export async function openRuntime(config: Config, log: Logger, observers?: RuntimeObservers): Promise<Runtime> {
  const edgeRuntime = onEdgeRuntime();
  for (const override of settingOverrides(config, { edgeRuntime })) log("warn", "setting_overridden", { ...override });
  const onSupabase = !config.DATABASE_URL && Boolean(config.SUPABASE_DB_URL);
  const ipSource = clientIpSource(config, { onSupabase, edgeRuntime });
  const everyAddress = everyAddressWarning(ipSource);
  if (everyAddress) log("warn", "client_ip_header_from_every_address", everyAddress);
  let db: Database;
  let database: string;
  let local: LocalPostgres | undefined;
  const deadlineMs = config.DATABASE_DEADLINE_MS;
  let databaseUsage: Omit<RuntimeUsage, "sightingsHeld"> = {};
  // A Postgres pool of 10 connections (5 per instance through Supabase's pooler), of which single
  // writes may hold all but the few kept for the batched kiosk reads (db/write-lane.ts).
  const pooled = (url: string, max: number, transactionPooler: boolean) => {
    const pool = openPostgres(url, { max, transactionPooler, deadlineMs });
    const lane = writeLane(pool, writeSlots(max, deadlineMs));
    const available = withAvailability(lane, log);
    databaseUsage = { pool: pool.use, writeLane: lane.use, databaseAvailable: available.available };
    return available;
  };
  if (!config.DATABASE_URL && !config.SUPABASE_DB_URL) {
    const { openLocalPostgres } = await importOptional<typeof import("./db/local-postgres.ts")>(new URL("./db/local-postgres.ts", import.meta.url));
    local = await openLocalPostgres({
      dataDir: config.DATA_DIR,
      port: config.SQL_PORT,
      preferredPort: DEFAULT_SQL_PORT,
      staffPassword: config.SQL_PASSWORD,
      log,
    });
  }
  const directUrl = config.DATABASE_URL ?? local?.url;
  if (directUrl) {
    db = pooled(directUrl, 10, false);
    database = local ? `postgres (${config.DATA_DIR})` : "postgres (DATABASE_URL)";
    // Migrations run on a session of their own: they hold a lock other processes wait for (migrate.ts).
    const session = openPostgres(directUrl, { max: 1, deadlineMs });
    const report = await migrate(session, { seed: true })
      .catch((error) => Promise.reject(local ? error : explainDatabaseUrl(error, directUrl)))
      .finally(() => session.close())
      .catch(async (error) => {
        await db.close();
        await local?.close();
        throw error;
      });
    log("info", "migrations_applied", { database, applied: report.applied.length });
    if (report.seeded) log("info", "seed_loaded", { database, reason: "a new database: the demo catalogue, accounts, keys and schedules" });
  } else {
    const url = config.SUPABASE_DB_URL!;
    db = pooled(url, 5, true);
    database = "supabase (SUPABASE_DB_URL)";
    // Refused at once rather than a 500 on every call; a database that does not answer now is left
    // to the availability layer and /ready, as an outage.
    if ((await everMigrated(db).catch(() => true)) === false) {
      await db.close();
      throw neverMigrated(url);
    }
  }
  // Counted from here on: every statement and check the app makes goes through these.
  if (observers) db = observedDatabase(db, observers.databaseFailed);
  const now = Date.now;
  const keepAlive = edgeRuntimeKeepAlive();
  const limiter = await createLimiter(config, log, now, { keepAlive });
  const rateLimiter = observers ? observedLimiter(limiter.limiter, observers.limiterUnavailable) : limiter.limiter;
  const sightings = kioskSightings({ db, now, log, keepAlive, flushEveryMs: config.SIGHTINGS_FLUSH_MS });
  // Read now, in the background: the first requests are limited at the contract's limits meanwhile.
  const venues = venueAllowances({ db, log });
  const deps: Deps = {
    db,
    writes: writesOf(db),
    limiter: rateLimiter,
    venues,
    log,
    now,
    catalogueTtlMs: config.CATALOGUE_TTL_MS,
    databaseDeadlineMs: deadlineMs,
    clientIpSource: ipSource,
    ipv6PrefixLength: config.IPV6_RATE_LIMIT_PREFIX,
    mailer: mailerFromConfig(config),
    signingSecret: config.SIGNING_SECRET,
    signingSecretPrevious: config.SIGNING_SECRET_PREVIOUS,
    standardWebhooksSecret: config.STANDARD_WEBHOOKS_SECRET,
    sightings,
    authUsers: authUsersFromConfig(config),
  };
  const unsetSecrets = [
    !config.SIGNING_SECRET && "SIGNING_SECRET (x-signature)",
    !config.STANDARD_WEBHOOKS_SECRET && "STANDARD_WEBHOOKS_SECRET (webhook-signature)",
  ].filter(Boolean);
  if (unsetSecrets.length > 0) {
    log("info", "onboarding_secrets_unset", {
      reason: `onboarding requests signed with an unset secret answer 401 until it is set: ${unsetSecrets.join(", ")}`,
    });
  }
  if (!deps.authUsers) {
    log("info", "auth_users_skipped", {
      reason: "no SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY: onboarded accounts get no Supabase Auth user",
    });
  }
  // E-mails a previous run left pending (a crash, a mail outage) go out at start, then every minute;
  // one pass at a time, since a pass may use its whole minute. A stop waits for the pass under way
  // (told to stop after the e-mail it is sending): closed under it, the database would refuse the
  // statement recording an e-mail just sent, which would then go again once its lease ended.
  const stopping = new AbortController();
  let sweeping: Promise<void> | undefined;
  const sweep = () => {
    sweeping ??= sweepOutbox(deps, stopping.signal).finally(() => (sweeping = undefined));
  };
  if (!onSupabase) sweep();
  const sweeper = onSupabase ? undefined : setInterval(sweep, OUTBOX_SWEEP_MS);
  // Events go out within about a second of their change, not at the next minute's pass.
  const following = onSupabase ? undefined : followEvents(deps, { signal: stopping.signal });
  return {
    deps,
    describe: { database, ...(local && { psql: local.psql }), limiter: limiter.describe, mailer: config.MAILER, clientIp: describeClientIp(ipSource), ipv6RateLimitPrefix: `/${config.IPV6_RATE_LIMIT_PREFIX}` },
    usage: { ...databaseUsage, sightingsHeld: sightings.held },
    ...(onSupabase && { pendingMigrations: () => pendingMigrations(db) }),
    async close() {
      clearInterval(sweeper);
      stopping.abort();
      if (sweeping) {
        log("info", "scheduled_pass_awaited", { reason: "the e-mails, alerts and checks under way finish before the database closes" });
        await sweeping;
      }
      // The message under way is recorded as sent before the database closes, as the pass's e-mail is.
      await following;
      venues.close();
      await limiter.close();
      // What kiosks were seen doing since the last write: written before the database goes.
      await sightings.close();
      await db.close();
      await local?.close();
    },
  };
}
