import type { LimitResult, LimitRule, RateLimiter } from "./limiter.ts";

/** How often expired windows are dropped, so idle identifiers do not accumulate. */
const SWEEP_EVERY_MS = 60_000;

/**
 * In-process fixed windows, a line-by-line twin of @upstash/ratelimit's `fixedWindow` script: the
 * window is `floor(now / windowMs)`, every call increments that window's counter (refused calls
 * too, as `INCRBY` does), and the call passes while the counter is at most `limit`. JavaScript runs
 * one call at a time, as Redis runs one script at a time, so concurrent requests cannot both take
 * the last slot. For the single-process local server; state is lost on restart.
 *
 * @example
 * const limiter = memoryLimiter(Date.now);
 * await limiter.limit(perMinute("license", 10), "203.0.113.7");
 */
export function memoryLimiter(now: () => number = Date.now): RateLimiter {
  const counters = new Map<string, { count: number; reset: number }>();
  let sweepAt = 0;
  return {
    limit(rule: LimitRule, identifier: string): Promise<LimitResult> {
      const at = now();
      if (at >= sweepAt) {
        for (const [key, counter] of counters) if (counter.reset <= at) counters.delete(key);
        sweepAt = at + SWEEP_EVERY_MS;
      }
      const bucket = Math.floor(at / rule.windowMs);
      const key = `${rule.name}:${identifier}:${bucket}`;
      const counter = counters.get(key) ?? { count: 0, reset: (bucket + 1) * rule.windowMs };
      counter.count += 1;
      counters.set(key, counter);
      return Promise.resolve({
        success: counter.count <= rule.limit,
        limit: rule.limit,
        remaining: Math.max(0, rule.limit - counter.count),
        reset: counter.reset,
      });
    },
  };
}
