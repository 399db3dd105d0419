import type { Database } from "../db/database.ts";
import { isUnavailable } from "../db/unavailable.ts";
import type { Logger } from "../log.ts";
import { errorMessage } from "../log.ts";

/**
 * How long one read of the fleet's counts serves the scrapes after it. The online count costs the
 * database about 0.3 s at 50,000 kiosks (measured here): read at most twice a minute, by one worker.
 */
export const FLEET_READ_EVERY_MS = 30_000;

/** The fleet as the database holds it, for the gauges of metrics.ts. */
export interface FleetCounts {
  online: number;
  dark: number;
  outboxPending: number;
  outboxOldestSeconds: number;
  seatSuspicions: number;
  /** When it was read (epoch milliseconds). */
  readAt: number;
}

/**
 * One statement. Online is `public.kiosk_status`'s `state = 'online'` (a sighting within the
 * account's `offline_alert_after`, else 15 minutes, the owner being `license_keys.belongs_to`),
 * counted as the offline-alert pass finds stale kiosks, set-based: the view itself calls a function
 * per key and took 5.5-7.5 s at 50,000 keys, this 0.3 s. Dark is an outage the alert pass opened and
 * no sighting has closed. `seat_suspicions` is read by the columns the seat checks have always
 * written, so columns added to it change nothing here.
 */
const FLEET_COUNTS = `
  select
    (select count(*) from public.kiosk_sightings as s
       join public.license_keys as k on k.key = s.license_key
       left join public.accounts as a on a.id = k.belongs_to
      where s.last_seen_at > pg_catalog.now() - coalesce(a.offline_alert_after, interval '15 minutes'))::int as online,
    (select count(*) from public.kiosk_outages as o where o.back_at is null)::int as dark,
    (select count(*) from public.email_outbox as e where e.status = 'pending')::int as outbox_pending,
    coalesce((select extract(epoch from pg_catalog.now() - min(e.created_at)) from public.email_outbox as e where e.status = 'pending'), 0)::float8 as outbox_oldest_seconds,
    (select count(*) from public.seat_suspicions as q where q.last_flagged_at > pg_catalog.now() - interval '1 day')::int as seat_suspicions`;

interface Row {
  online: number;
  dark: number;
  outbox_pending: number;
  outbox_oldest_seconds: number;
  seat_suspicions: number;
}

/**
 * The fleet's counts, read when asked and kept `everyMs`; one read at a time. A read that fails
 * keeps the last counts (their `readAt` says how old), or none before the first.
 *
 * @example
 * const read = fleetCounts({ db, log, now: Date.now });
 * await read(); // { online: 24_886, dark: 3, ... }
 */
export function fleetCounts(options: { db: Database; log: Logger; now: () => number; everyMs?: number }): () => Promise<FleetCounts | undefined> {
  const everyMs = options.everyMs ?? FLEET_READ_EVERY_MS;
  let last: FleetCounts | undefined;
  let reading: Promise<FleetCounts | undefined> | undefined;

  async function read(): Promise<FleetCounts | undefined> {
    const readAt = options.now();
    try {
      const [row] = await options.db.query<Row>(FLEET_COUNTS);
      last = {
        online: row.online,
        dark: row.dark,
        outboxPending: row.outbox_pending,
        outboxOldestSeconds: row.outbox_oldest_seconds,
        seatSuspicions: row.seat_suspicions,
        readAt,
      };
    } catch (error) {
      // An outage is logged once where it is detected (db/availability.ts).
      if (!isUnavailable(error)) options.log("error", "fleet_counts_failed", { error: errorMessage(error) });
    }
    return last;
  }

  return () => {
    if (last && options.now() - last.readAt < everyMs) return Promise.resolve(last);
    reading ??= read().finally(() => (reading = undefined));
    return reading;
  };
}
