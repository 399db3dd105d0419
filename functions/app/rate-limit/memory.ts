import type { LimitResult, LimitRule, RateLimiter } from "./limiter.ts";
import { WindowCounts } from "./window-counts.ts";

/**
 * In-process fixed windows, a line-by-line twin of @upstash/ratelimit's `fixedWindow` script: the
 * window is `floor(now / windowMs)`, every call increments that window's counter (refused calls
 * too, as `INCRBY` does), and the call passes while the counter is at most `limit`. JavaScript runs
 * one call at a time, as Redis runs one script at a time, so concurrent requests cannot both take
 * the last slot. Only the current window's counters are kept, one table per rule, dropped whole
 * when the window turns: no sweep, and memory bounded by one window's clients (`WindowCounts`:
 * about 16 bytes an IPv4 client). For the single-process local server; state is lost on restart.
 *
 * @example
 * const limiter = memoryLimiter(Date.now);
 * await limiter.limit(RULES.license, "203.0.113.7");
 */
export function memoryLimiter(now: () => number = Date.now): RateLimiter {
  const windows = new Map<string, { bucket: number; counts: WindowCounts }>();
  return {
    limit(rule: LimitRule, identifier: string): Promise<LimitResult> {
      const bucket = Math.floor(now() / rule.windowMs);
      let window = windows.get(rule.name);
      if (!window || window.bucket !== bucket) {
        window = { bucket, counts: new WindowCounts() };
        windows.set(rule.name, window);
      }
      const count = window.counts.increment(identifier);
      return Promise.resolve({
        success: count <= rule.limit,
        limit: rule.limit,
        remaining: Math.max(0, rule.limit - count),
        reset: (bucket + 1) * rule.windowMs,
      });
    },
    refund(rule: LimitRule, identifier: string, reset: number): Promise<void> {
      const window = windows.get(rule.name);
      if (window && (window.bucket + 1) * rule.windowMs === reset) window.counts.decrement(identifier);
      return Promise.resolve();
    },
    isRefused(rule: LimitRule, identifier: string): boolean {
      const window = windows.get(rule.name);
      return window?.bucket === Math.floor(now() / rule.windowMs) && window.counts.count(identifier) > rule.limit;
    },
  };
}
