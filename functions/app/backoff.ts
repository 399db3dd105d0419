const FIRST_RETRY_MS = 60_000;
const LAST_RETRY_MS = 6 * 60 * 60_000;

/**
 * The wait before the next try after `attempts` failed ones: 1 min, 2, 4, ... capped at 6 hours.
 * One schedule for everything retried after commit: queued e-mails and Auth users to link.
 */
export function retryDelayMs(attempts: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1), LAST_RETRY_MS);
}

const FIRST_EVENT_RETRY_MS = 5_000;
const LAST_EVENT_RETRY_MS = 60 * 60_000;

/** How long an endpoint may keep failing before it is disabled (Stripe's schedule: three days). */
export const EVENT_RETRY_WINDOW_MS = 3 * 24 * 60 * 60_000;

/**
 * The wait before an endpoint is tried again after `failures` failed attempts in a row: 5 s, 10,
 * 20, ... capped at an hour, each drawn between half and all of it (jitter), so endpoints that
 * failed together (a receiver's outage) do not all come back in the same second. Events wait
 * behind their endpoint's message, so the first retries are quick; an endpoint down for three days
 * is tried 70 to 100 times.
 *
 * @example
 * const retryAt = now + eventRetryDelayMs(failures, Math.random);
 */
export function eventRetryDelayMs(failures: number, random: () => number): number {
  const ceiling = Math.min(FIRST_EVENT_RETRY_MS * 2 ** Math.max(0, failures - 1), LAST_EVENT_RETRY_MS);
  return Math.round(ceiling * (0.5 + random() / 2));
}
