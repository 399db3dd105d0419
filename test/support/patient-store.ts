import type { StoreBounds } from "../../functions/app/rate-limit/create-limiter.ts";

/**
 * Store bounds for the tests of what a store counts and sends, not of how long it may take: a check
 * waits for the store as long as vitest waits for a test (`testTimeout`), so a loaded machine slows
 * such a test down rather than turning its checks into a slow store's fail mode. (With the runtime's
 * 500 ms, every check of a 50-request burst once timed out beside a second suite and failed open:
 * 50 of 50 passed.) The runtime's bounds are tested where they are the subject, on stores that
 * never answer.
 *
 * @example
 * const store = await createLimiter({ REDIS_URL: redis.url }, log, Date.now, { bounds: PATIENT });
 */
export const PATIENT: StoreBounds = { checkMs: 300_000, connectMs: 300_000 };
