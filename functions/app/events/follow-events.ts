import { isUnavailable } from "../db/unavailable.ts";
import { errorMessage } from "../log.ts";
import { deliverEvents, type EventDeliveryPorts } from "./deliver-events.ts";

/**
 * How long a long-running server waits, with nothing to send, before it looks again for events
 * owed: a change reaches its endpoints about this long after its commit (issue 61: a p99 of 2 s
 * from change to delivery). One indexed look per worker each time, whatever the fleet.
 */
export const EVENT_FOLLOW_MS = 500;

/** The most one round sends before it looks again; an endpoint is leased for far longer. */
const ROUND_BUDGET_MS = 10_000;

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });

/**
 * Delivers events as they are recorded, for as long as `signal` is not aborted: a round of
 * `deliverEvents` (which leases each endpoint, so workers never send to one at once), then, when
 * the round found nothing to send or failed, a pause of `everyMs`. The minute's scheduled pass
 * delivers too, and remains the only delivery where no process outlives a request (Supabase Edge
 * Functions). Resolves once the round under way has finished after the abort.
 *
 * @example
 * const following = followEvents(deps, { signal: stopping.signal });
 */
export async function followEvents(ports: EventDeliveryPorts, options: { signal: AbortSignal; everyMs?: number }): Promise<void> {
  const everyMs = options.everyMs ?? EVENT_FOLLOW_MS;
  while (!options.signal.aborted) {
    let sent = 0;
    try {
      const report = await deliverEvents(ports, { budgetMs: ROUND_BUDGET_MS, signal: options.signal });
      sent = report.messages + report.failed + report.disabled;
    } catch (error) {
      // A database outage is logged once, when it starts (db/availability.ts); the next look retries.
      if (!isUnavailable(error)) ports.log("error", "event_delivery_failed", { error: errorMessage(error) });
    }
    if (sent === 0) await pause(everyMs, options.signal);
  }
}
