import { isUnavailable } from "./db/unavailable.ts";
import { errorMessage } from "./log.ts";
import { alertOfflineKiosks, type OfflineAlertReport } from "./kiosk/offline-alerts.ts";
import { deliverPending, type DeliveryReport, type OutboxPorts } from "./mail/outbox.ts";

export interface ScheduledPassReport extends DeliveryReport {
  /** The offline-alert pass; absent when it failed (logged), which never stops the delivery. */
  alerts?: OfflineAlertReport;
}

/**
 * What runs every minute (pg_cron and the `outbox` function on Supabase, `npm start` locally,
 * `npm run outbox:deliver` from cron): the offline-alert pass, then the outbox delivery, which
 * sends the alert e-mails the pass just queued in the same run. An alert pass that fails is logged
 * and the delivery still runs: queued e-mails must not wait on it.
 *
 * @example
 * const report = await runScheduledPass(deps);
 */
export async function runScheduledPass(ports: OutboxPorts, options: { max?: number; budgetMs?: number } = {}): Promise<ScheduledPassReport> {
  let alerts: OfflineAlertReport | undefined;
  try {
    alerts = await alertOfflineKiosks(ports);
  } catch (error) {
    // A database outage is logged once, when it starts (db/availability.ts); the next run retries.
    if (!isUnavailable(error)) ports.log("error", "kiosk_alerts_failed", { error: errorMessage(error) });
  }
  const delivery = await deliverPending(ports, options);
  return alerts ? { ...delivery, alerts } : delivery;
}
