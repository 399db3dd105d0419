import type { LimitResult, LimitRule, RateLimiter } from "./limiter.ts";

/**
 * In-process fixed windows, the same algorithm as @upstash/ratelimit's `fixedWindow`: a counter per
 * rule, identifier and window start. For the single-process local server.
 */
export function memoryLimiter(now: () => number = Date.now): RateLimiter {
  const windows = new Map<string, { reset: number; count: number }>();
  let sweepAt = 0;
  return {
    limit(rule: LimitRule, identifier: string): Promise<LimitResult> {
      const at = now();
      if (at >= sweepAt) {
        for (const [key, window] of windows) if (window.reset <= at) windows.delete(key);
        sweepAt = at + 60_000;
      }
      const start = Math.floor(at / rule.windowMs) * rule.windowMs;
      const key = `${rule.name}:${identifier}`;
      let window = windows.get(key);
      if (!window || window.reset <= at) {
        window = { reset: start + rule.windowMs, count: 0 };
        windows.set(key, window);
      }
      window.count += 1;
      return Promise.resolve({
        success: window.count <= rule.limit,
        limit: rule.limit,
        remaining: Math.max(0, rule.limit - window.count),
        reset: window.reset,
      });
    },
  };
}
