import { LimiterUnavailable, type RateLimiter } from "./limiter.ts";

/**
 * The same limiter, each check its store could not answer (an error, or no answer within the
 * store's bound: `LimiterUnavailable`) told to `onUnavailable` with the rule's name, before the
 * rule's fail mode applies (rate-limit/enforce-limit.ts).
 *
 * @example
 * const limiter = observedLimiter(store.limiter, metrics.limiterUnavailable);
 */
export function observedLimiter(limiter: RateLimiter, onUnavailable: (rule: string) => void): RateLimiter {
  return {
    // A handler on the promise, not an async wrapper: no extra turn on every check's path.
    limit: (rule, identifier) =>
      limiter.limit(rule, identifier).catch((error: unknown) => {
        if (error instanceof LimiterUnavailable) onUnavailable(rule.name);
        throw error;
      }),
    isRefused: (rule, identifier) => limiter.isRefused(rule, identifier),
    refund: (rule, identifier, reset) => limiter.refund(rule, identifier, reset),
  };
}
