import { batchWhileBusy } from "../batch-while-busy.ts";
import type { LimitResult, LimitRule, RateLimiter } from "./limiter.ts";
import type { ScriptCall } from "./redis-script.ts";

/** How often identifiers whose refusal has ended are dropped from the in-process cache. */
const SWEEP_EVERY_MS = 60_000;

/**
 * @upstash/ratelimit's `fixedWindow` script over many keys in one call: each key is a window's
 * counter, incremented (refused checks too), and given its window as expiry when new. Redis runs a
 * script alone, so checks of one key in one call or in concurrent calls count exactly as one call
 * each would: never two passes for the last slot.
 */
const FIXED_WINDOWS = `
local counts = {}
for i, key in ipairs(KEYS) do
  local count = redis.call("INCR", key)
  if count == 1 then
    redis.call("PEXPIRE", key, ARGV[i])
  end
  counts[i] = count
end
return counts`;

/**
 * The networked store: fixed windows counted in Redis, either Upstash itself (REST) or a plain
 * Redis (`REDIS_URL`), so every instance of the function shares the same windows. Keys
 * are @upstash/ratelimit's (`cadence:ratelimit:<rule>:<identifier>:<window>`), so instances of
 * this and of the earlier release share counts during a rolling deploy.
 *
 * Checks share round trips: one asked for while no call is in flight is sent at once, alone;
 * those asked for meanwhile go together in the next call (`batchWhileBusy`), every rule and
 * identifier in one `EVALSHA`. Under load a burst of N checks costs about N / batch commands
 * instead of N; Upstash bills per command. An identifier refused in a window is refused from
 * memory until the window ends, as @upstash/ratelimit's ephemeral cache does: a flood from one
 * client costs no command at all.
 *
 * `load` makes the store's caller of a script: on Upstash @upstash/redis's `createScript`, on a
 * plain Redis `redisScript`; both send `EVALSHA`, and `EVAL` when the script is not loaded yet.
 *
 * @example
 * const redis = new Redis({ url, token });
 * const limiter = redisLimiter((script) => (keys, args) => redis.createScript<number[]>(script).exec(keys, args));
 */
export function redisLimiter(load: (script: string) => ScriptCall<number[]>): RateLimiter {
  const fixedWindows = load(FIXED_WINDOWS);
  const count = batchWhileBusy((windows: Array<{ key: string; windowMs: number }>) =>
    fixedWindows(windows.map((window) => window.key), windows.map((window) => String(window.windowMs)))
  );
  /** `prefix:identifier` of each refused identifier -> when its window ends. */
  const refused = new Map<string, number>();
  let sweepAt = 0;
  return {
    async limit(rule: LimitRule, identifier: string): Promise<LimitResult> {
      const at = Date.now();
      if (at >= sweepAt) {
        for (const [id, until] of refused) if (until <= at) refused.delete(id);
        sweepAt = at + SWEEP_EVERY_MS;
      }
      const id = `cadence:ratelimit:${rule.name}:${identifier}`;
      const window = Math.floor(at / rule.windowMs);
      const reset = (window + 1) * rule.windowMs;
      // Most of the time no one is refused: no lookup then.
      const refusedUntil = refused.size === 0 ? undefined : refused.get(id);
      if (refusedUntil !== undefined && refusedUntil > at) {
        return { success: false, limit: rule.limit, remaining: 0, reset: refusedUntil };
      }
      const used = await count({ key: `${id}:${window}`, windowMs: rule.windowMs });
      const success = used <= rule.limit;
      if (!success) refused.set(id, reset);
      return { success, limit: rule.limit, remaining: Math.max(0, rule.limit - used), reset };
    },
  };
}
