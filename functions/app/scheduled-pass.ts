import type { AuthLinkPorts, LinkReport } from "./auth-users/link-auth-user.ts";
import { linkPendingAccounts } from "./auth-users/link-auth-user.ts";
import { isUnavailable } from "./db/unavailable.ts";
import { deliverEvents, type EventDeliveryReport } from "./events/deliver-events.ts";
import { alertOfflineKiosks, type OfflineAlertReport } from "./kiosk/offline-alerts.ts";
import { checkSeats, type SeatCheckReport } from "./kiosk/seat-checks.ts";
import { errorMessage } from "./log.ts";
import { deliverPending, type DeliveryReport, type OutboxPorts } from "./mail/outbox.ts";
import { purgeOnboardingKeys } from "./onboarding/store.ts";

/** Expired onboarding ids deleted per statement: each statement stays short beside the requests. */
const PURGE_BATCH = 1_000;

/** What the scheduled run needs; the app's `Deps` has it all. */
export type ScheduledPassPorts = OutboxPorts & AuthLinkPorts;

export interface ScheduledPassReport extends DeliveryReport {
  /** The offline-alert pass; absent when it failed (logged), which never stops the delivery. */
  alerts?: OfflineAlertReport;
  /** The seat-check pass; absent when it failed (logged), which never stops the delivery. */
  seats?: SeatCheckReport;
  /** The events delivered to the endpoints staff configure; absent when that failed (logged). */
  events?: EventDeliveryReport;
  /** Accounts linked to (or still failing to reach) Supabase Auth; present only with Auth configured. */
  authUsers?: LinkReport;
  /** Onboarding ids past their 24 hours, deleted by this run; present only when there were some. */
  idempotencyKeysPurged?: number;
}

/**
 * What runs every minute (pg_cron and the `outbox` function on Supabase, `npm start` locally,
 * `npm run outbox:deliver` from cron), one room's work after another, so that no room reaches into
 * another: the offline-alert pass and the seat checks (kiosk/), the events they and every change recorded,
 * to the endpoints staff configure (events/), then the outbox delivery (mail/), which
 * sends the alert e-mails and the staff digest those passes just queued in the same run; then, with Supabase Auth configured, the accounts
 * onboarding could not link to an Auth user (auth-users/); last, the onboarding ids past their 24
 * hours (onboarding/), batch by batch within the budget, so their table stays bounded. An alert
 * or seat-check pass that fails is logged and the rest still runs: queued e-mails must not wait on it.
 *
 * @example
 * const report = await runScheduledPass(deps);
 */
export async function runScheduledPass(
  ports: ScheduledPassPorts,
  options: { max?: number; budgetMs?: number; signal?: AbortSignal } = {},
): Promise<ScheduledPassReport> {
  const deadline = ports.now() + (options.budgetMs ?? 60_000);
  let alerts: OfflineAlertReport | undefined;
  try {
    alerts = await alertOfflineKiosks(ports);
  } catch (error) {
    // A database outage is logged once, when it starts (db/availability.ts); the next run retries.
    if (!isUnavailable(error)) ports.log("error", "kiosk_alerts_failed", { error: errorMessage(error) });
  }
  let seats: SeatCheckReport | undefined;
  try {
    seats = await checkSeats(ports);
  } catch (error) {
    if (!isUnavailable(error)) ports.log("error", "seat_checks_failed", { error: errorMessage(error) });
  }
  // Before the outbox: an endpoint disabled here has its staff e-mail sent in this run. A third of
  // the budget at most, so a slow receiver never holds up the e-mails.
  let events: EventDeliveryReport | undefined;
  try {
    events = await deliverEvents(ports, { budgetMs: Math.min(20_000, (deadline - ports.now()) / 3), signal: options.signal });
  } catch (error) {
    if (!isUnavailable(error)) ports.log("error", "event_delivery_failed", { error: errorMessage(error) });
  }
  const report: ScheduledPassReport = await deliverPending(ports, options);
  if (events) report.events = events;
  if (alerts) report.alerts = alerts;
  if (seats) report.seats = seats;
  // A process stopping (`signal`): each step finishes the item under way and leaves the rest to the next run.
  if (ports.authUsers) report.authUsers = await linkPendingAccounts(ports, { max: options.max ?? 100, signal: options.signal });
  let purged = 0;
  for (let batch = PURGE_BATCH; batch === PURGE_BATCH && ports.now() < deadline && !options.signal?.aborted;) {
    batch = await purgeOnboardingKeys(ports.db, ports.now(), PURGE_BATCH);
    purged += batch;
  }
  if (purged > 0) report.idempotencyKeysPurged = purged;
  return report;
}
