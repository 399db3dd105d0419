import { Ratelimit } from "@upstash/ratelimit";
import type { Redis } from "@upstash/redis";
import type { LimitResult, LimitRule, RateLimiter } from "./limiter.ts";

/** How often identifiers whose block has ended are dropped from the in-process caches. */
const SWEEP_EVERY_MS = 60_000;

/**
 * The production store: @upstash/ratelimit's `fixedWindow` over an @upstash/redis client, either
 * Upstash itself (REST) or a plain Redis behind `redisRequester`. The counting happens in Redis,
 * in one Lua script per call, so every instance of the function shares the same windows.
 *
 * One `Ratelimit` per rule, built on first use. Each keeps an ephemeral in-process cache of the
 * identifiers it refused, until their window resets: a flood from one client then costs no Redis
 * command at all. The library only forgets a cached identifier when that identifier asks again,
 * so the caches are swept here, or a long-running server would keep every refused client forever.
 *
 * `timeout: 0` turns off the library's own timeout, which silently lets requests through after
 * 5 s; `boundedLimiter` bounds the call instead, and each rule chooses to fail open or closed.
 *
 * @example
 * const limiter = upstashLimiter(new Redis({ url, token }));
 */
export function upstashLimiter(redis: Redis): RateLimiter {
  const limiters = new Map<string, { ratelimit: Ratelimit; refused: Map<string, number> }>();
  let sweepAt = 0;
  return {
    async limit(rule: LimitRule, identifier: string): Promise<LimitResult> {
      const at = Date.now();
      if (at >= sweepAt) {
        for (const { refused } of limiters.values()) {
          for (const [key, reset] of refused) if (reset < at) refused.delete(key);
        }
        sweepAt = at + SWEEP_EVERY_MS;
      }
      const id = `${rule.name}:${rule.limit}:${rule.windowMs}`;
      let entry = limiters.get(id);
      if (!entry) {
        const refused = new Map<string, number>();
        const ratelimit = new Ratelimit({
          redis,
          limiter: Ratelimit.fixedWindow(rule.limit, `${rule.windowMs} ms`),
          prefix: `cadence:ratelimit:${rule.name}`,
          ephemeralCache: refused,
          timeout: 0,
          analytics: false,
        });
        entry = { ratelimit, refused };
        limiters.set(id, entry);
      }
      const { success, limit, remaining, reset } = await entry.ratelimit.limit(identifier);
      return { success, limit, remaining, reset };
    },
  };
}
