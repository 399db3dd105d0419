import type { Config } from "../config.ts";
import { listenOn } from "../http/port-in-use.ts";
import type { Logger } from "../log.ts";
import { errorMessage } from "../log.ts";
import type { Runtime } from "../runtime.ts";
import { type AdminListener, openAdminListener } from "./admin-listener.ts";
import { fleetCounts } from "./fleet-gauges.ts";
import { workerMetrics, type WorkerMetrics } from "./metrics.ts";
import { type Readiness, workerReadiness } from "./readiness.ts";

/** How often a worker that waits for `supabase db push` looks at the migrations again. */
export const MIGRATIONS_RECHECK_MS = 10_000;

export interface WorkerAdmin {
  readiness: Readiness;
  metrics: WorkerMetrics;
  listener: AdminListener;
  /** Reads the runtime from now on: its usage for the metrics, and what readiness waits for in it. */
  attach(runtime: Runtime): void;
}

/**
 * The admin side of a self-hosted worker, opened before the runtime so that `/live` answers while
 * a start migrates: readiness waits for the migrations, the API's listener and the first read of
 * the venue registrations (without it a venue's kiosks are refused at the contract's limit until
 * the read answers); the metrics count from the first request. Worker 1 (or a server started
 * alone) also reports the fleet's gauges, which the database computes for the whole fleet: read by
 * every worker, they would cost it once per worker and count once per worker in a sum.
 *
 * @example
 * const admin = await openWorkerAdmin(config, consoleLogger);
 * const runtime = await openRuntime(config, consoleLogger, admin.metrics);
 * admin.attach(runtime);
 */
export async function openWorkerAdmin(config: Config & { ADMIN_PORT: number }, log: Logger): Promise<WorkerAdmin> {
  const readiness = workerReadiness(["migrations", "listening", "venues"]);
  const metrics = workerMetrics();
  let runtime: Runtime | undefined;
  const listener = await listenOn(config.ADMIN_PORT, "ADMIN_PORT", () =>
    openAdminListener({
      port: config.ADMIN_PORT,
      readiness,
      metrics,
      log,
      database() {
        const available = runtime?.usage.databaseAvailable;
        if (!runtime) return "not opened";
        return available === undefined || available() ? "available" : "unavailable";
      },
    }));
  return {
    readiness,
    metrics,
    listener,
    attach(opened) {
      runtime = opened;
      metrics.attach(opened.usage);
      if ((config.WORKER ?? 1) === 1) metrics.attachFleet(fleetCounts({ db: opened.deps.db, log, now: opened.deps.now }));
      void opened.deps.venues?.firstLoad.then(() => readiness.met("venues"));
      if (!opened.deps.venues) readiness.met("venues");
      void migrationsCurrent(opened, log).then(() => readiness.met("migrations"));
    },
  };
}

/**
 * Resolves once the database holds every migration of this checkout: at once where the start
 * applied them; where it does not (`SUPABASE_DB_URL`), when `supabase db push` has, looked at every
 * `MIGRATIONS_RECHECK_MS` (logged once while some are missing).
 */
async function migrationsCurrent(runtime: Runtime, log: Logger): Promise<void> {
  const pending = runtime.pendingMigrations;
  if (!pending) return;
  let logged = false;
  for (;;) {
    try {
      const missing = await pending();
      if (missing.length === 0) return;
      if (!logged) log("warn", "migrations_pending", { missing, reason: "not ready until `supabase db push` has applied them" });
      logged = true;
    } catch (error) {
      log("warn", "migrations_unread", { error: errorMessage(error) });
    }
    await new Promise((resolve) => setTimeout(resolve, MIGRATIONS_RECHECK_MS));
  }
}
