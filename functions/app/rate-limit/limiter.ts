/** The outcome of one rate-limit check, as @upstash/ratelimit reports it. */
export interface LimitResult {
  success: boolean;
  limit: number;
  remaining: number;
  /** When the window resets, in epoch milliseconds. */
  reset: number;
}

/**
 * What a route answers when the limiter's store is down or slow: `open` lets the request through
 * unlimited (kiosks keep working through a Redis outage), `closed` refuses it with 503 (onboarding
 * creates accounts and sends e-mail, so an unchecked flood costs more than a short refusal).
 */
export type FailMode = "open" | "closed";

/** A rate-limit rule: `limit` requests per fixed window of `windowMs` for each identifier. */
export interface LimitRule {
  /** Names the bucket, e.g. `license` or `onboarding-email`; rules with different names never share a count. */
  name: string;
  limit: number;
  windowMs: number;
  failMode: FailMode;
  /**
   * A kiosk route's rule: a registered venue address gets `limit` times its kiosks, counted in one
   * bucket for the whole registration (rate-limit/venue-limit.ts). Unset: the limit is the same for everyone.
   */
  perKiosk?: boolean;
}

/**
 * The limiter port: every store (memory, Redis, Upstash) implements it with the fixed-window
 * algorithm of @upstash/ratelimit. A store that cannot answer rejects with `LimiterUnavailable`.
 */
export interface RateLimiter {
  /** Counts one request of `identifier` against `rule`. */
  limit(rule: LimitRule, identifier: string): Promise<LimitResult>;
  /**
   * Whether `identifier` was already refused in `rule`'s current window, as this process knows
   * without asking the store: its next check is a refusal too (answered from memory).
   */
  isRefused(rule: LimitRule, identifier: string): boolean;
}

/** The store did not answer in time or failed; the rule's `failMode` decides what happens. */
export class LimiterUnavailable extends Error {
  override name = "LimiterUnavailable";
}
