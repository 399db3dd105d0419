import process from "node:process";
import { Counter, Gauge, Registry } from "prom-client";
import type { AdmissionUse, ShedReason } from "../http/admission.ts";
import type { RequestObserver } from "../http/request-timing.ts";
import type { RuntimeObservers, RuntimeUsage } from "../runtime.ts";
import type { FleetCounts } from "./fleet-gauges.ts";
import { requestDurations } from "./request-durations.ts";
import { unrefTimer } from "../unref-timer.ts";

/** How often the event loop's delay is sampled (a timer's lateness). */
const LOOP_CHECK_EVERY_MS = 100;

export interface WorkerMetrics extends RuntimeObservers {
  /** For the app's request timing (http/request-timing.ts). */
  observeRequest: RequestObserver;
  /** Reads the runtime's parts at each scrape, from now on. */
  attach(usage: RuntimeUsage): void;
  /** A request refused by admission control (http/admission.ts), and why. */
  requestShed(reason: ShedReason): void;
  /** Reads admission's requests in flight and waiting at each scrape, from now on. */
  attachAdmission(use: () => AdmissionUse): void;
  /** Reports the fleet's counts (fleet-gauges.ts), which only one worker of a machine reads. */
  attachFleet(read: () => Promise<FleetCounts | undefined>): void;
  /** The Prometheus text exposition. */
  scrape(): Promise<string>;
  contentType: string;
}

/**
 * One worker's metrics, in Prometheus' text format, with prom-client (the maintained client the
 * Prometheus project lists for Node.js; its registry renders the format itself and needs no HTTP
 * server of its own); the request histogram is in request-durations.ts. Names follow Prometheus'
 * conventions (`_seconds`, `_total`, base units) and labels stay few. Each worker is its own scrape target (its admin port):
 * Prometheus sums them, and a worker restarted starts its counters from zero, which `rate()` reads
 * as the reset it is. prom-client's default process metrics are not used: under Deno's permissions
 * they read /proc/self as zero (memory, descriptors).
 *
 * @example
 * const metrics = workerMetrics();
 * const app = createApp({ ...deps, observeRequest: metrics.observeRequest });
 */
export function workerMetrics(): WorkerMetrics {
  const registry = new Registry();
  const registers = [registry];

  const observeRequest = requestDurations(registry);

  const shed = new Counter({
    name: "cadence_database_statements_shed_total",
    help: "Statements shed as back-pressure (DatabaseBusy): the deadline ran out waiting for a pool connection, a write slot or a batch ahead; answered 503 or from the last known good.",
    registers,
  });
  const unavailable = new Counter({
    name: "cadence_database_statements_unavailable_total",
    help: "Statements that failed because the database was unreachable or past its deadline, or refused at once while it was marked unavailable.",
    registers,
  });
  const requestsShed = new Counter({
    name: "cadence_requests_shed_total",
    help: "Requests answered 503 with Retry-After by admission control before any work (http/admission.ts): every turn taken and ADMISSION_LIMIT waiting (full), no turn within ADMISSION_QUEUE_MS (waited), or the event loop running ADMISSION_QUEUE_MS behind (behind).",
    labelNames: ["reason"],
    registers,
  });
  const limiterErrors = new Counter({
    name: "cadence_rate_limit_store_errors_total",
    help: "Rate-limit checks whose store (Redis, Upstash) erred or did not answer within 500 ms; the rule's fail mode applied.",
    labelNames: ["rule"],
    registers,
  });

  /** A gauge read at each scrape; registered only where its source exists, so none reads 0 for "not here". */
  const readGauge = (name: string, help: string, read: () => number | Promise<number | undefined>) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        const value = await read();
        if (value !== undefined) this.set(value);
      },
    });
  /** The runtime's parts, each read at every scrape. */
  function attachUsage(usage: RuntimeUsage) {
    const { pool, writeLane, databaseAvailable } = usage;
    if (pool) {
      new Gauge({
        name: "cadence_database_pool_connections",
        help: "Connections of this worker's Postgres pool, by state.",
        labelNames: ["state"],
        registers,
        collect() {
          const now = pool();
          this.set({ state: "busy" }, now.total - now.idle);
          this.set({ state: "idle" }, now.idle);
        },
      });
      readGauge("cadence_database_pool_max_connections", "The size of this worker's Postgres pool.", () => pool().max);
      readGauge("cadence_database_pool_waiting_statements", "Statements waiting for a connection of this worker's pool.", () => pool().waiting);
    }
    if (writeLane) {
      new Gauge({
        name: "cadence_database_write_lane_slots",
        help: "The write lane's slots (the pool connections single writes may hold), by state.",
        labelNames: ["state"],
        registers,
        collect() {
          const now = writeLane();
          this.set({ state: "busy" }, now.busy);
          this.set({ state: "free" }, now.slots - now.busy);
        },
      });
      readGauge("cadence_database_write_lane_waiting_writes", "Single writes waiting for a slot of the write lane (shed once their deadline passes).", () => writeLane().waiting);
    }
    if (databaseAvailable) {
      readGauge(
        "cadence_database_available",
        "1 while this worker takes the database as answering, 0 while it answers from the last known good (db/availability.ts).",
        () => (databaseAvailable() ? 1 : 0),
      );
    }
    readGauge("cadence_kiosk_sightings_held", "Kiosk sightings this worker holds for its next write (written every few seconds, kept through an outage).", usage.sightingsHeld);
  }

  function attachAdmission(use: () => AdmissionUse) {
    readGauge("cadence_requests_in_flight", "Requests this worker works on now; at most ADMISSION_LIMIT.", () => use().inFlight);
    readGauge("cadence_requests_waiting", "Requests waiting for a turn (http/admission.ts); each is answered 503 once it has waited ADMISSION_QUEUE_MS.", () => use().waiting);
  }

  /** The fleet's counts: fleet-gauges.ts keeps them for a while, so one read serves every gauge below. */
  function attachFleet(read: () => Promise<FleetCounts | undefined>) {
    const fleetGauge = (name: string, help: string, value: (counts: FleetCounts) => number) =>
      readGauge(name, help, async () => {
        const counts = await read();
        return counts && value(counts);
      });
    fleetGauge("cadence_kiosks_online", "License keys whose kiosk was seen within its account's offline_alert_after (15 minutes by default), as public.kiosk_status counts online.", (c) => c.online);
    fleetGauge("cadence_kiosks_dark", "Kiosks gone dark: offline-alert outages opened and not yet back (public.kiosk_outages).", (c) => c.dark);
    fleetGauge("cadence_outbox_pending_emails", "E-mails queued and not yet sent (public.email_outbox).", (c) => c.outboxPending);
    fleetGauge("cadence_outbox_oldest_pending_age_seconds", "Age of the oldest e-mail still pending; 0 when none is.", (c) => c.outboxOldestSeconds);
    fleetGauge("cadence_seat_suspicions", "License keys flagged by the seat checks within the last day (public.seat_suspicions): suspected of being used by more than one kiosk.", (c) => c.seatSuspicions);
    fleetGauge("cadence_fleet_read_timestamp_seconds", "When the fleet's counts above were read from the database (Unix time): they keep their last values while it is unavailable.", (c) => c.readAt / 1000);
  }

  // How late the event loop runs a timer: the check that finds a stuck worker sees it only once it
  // is stuck; this shows it slowing first. A timer of our own: Deno's monitorEventLoopDelay hooks
  // every turn of the loop and cost 1.2 µs a request, as much as the rest of the metrics together.
  let expectedAt = performance.now() + LOOP_CHECK_EVERY_MS;
  let mostLate = 0;
  unrefTimer(setInterval(() => {
    const now = performance.now();
    mostLate = Math.max(mostLate, now - expectedAt);
    expectedAt = now + LOOP_CHECK_EVERY_MS;
  }, LOOP_CHECK_EVERY_MS));
  new Gauge({
    name: "cadence_event_loop_delay_max_seconds",
    help: "The most this worker's event loop ran a 100 ms timer late since the last scrape.",
    registers,
    collect() {
      this.set(Math.max(0, mostLate) / 1000);
      mostLate = 0;
    },
  });
  new Gauge({
    name: "process_resident_memory_bytes",
    help: "Resident memory size in bytes.",
    registers,
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  new Counter({
    name: "process_cpu_seconds_total",
    help: "Total user and system CPU time spent in seconds.",
    registers,
    collect() {
      const { user, system } = process.cpuUsage();
      this.reset();
      this.inc((user + system) / 1e6);
    },
  });
  new Gauge({
    name: "process_start_time_seconds",
    help: "Start time of the process since unix epoch in seconds.",
    registers,
  }).set(Math.round(Date.now() / 1000 - performance.now() / 1000));

  return {
    observeRequest,
    databaseFailed: (kind) => (kind === "busy" ? shed : unavailable).inc(),
    limiterUnavailable: (rule) => limiterErrors.inc({ rule }),
    attach: attachUsage,
    requestShed: (reason) => requestsShed.inc({ reason }),
    attachAdmission,
    attachFleet,
    scrape: () => registry.metrics(),
    contentType: registry.contentType,
  };
}
