const FIRST_RETRY_MS = 60_000;
const LAST_RETRY_MS = 6 * 60 * 60_000;

/**
 * The wait before the next try after `attempts` failed ones: 1 min, 2, 4, ... capped at 6 hours.
 * One schedule for everything retried after commit: queued e-mails and Auth users to link.
 */
export function retryDelayMs(attempts: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1), LAST_RETRY_MS);
}
