/** The outcome of one rate-limit check, as @upstash/ratelimit reports it. */
export interface LimitResult {
  success: boolean;
  limit: number;
  remaining: number;
  /** When the window resets, in epoch milliseconds. */
  reset: number;
}

/** A rate-limit rule: `limit` requests per `windowMs` for each identifier. */
export interface LimitRule {
  /** Names the bucket, e.g. `license` or `onboarding-email`. */
  name: string;
  limit: number;
  windowMs: number;
}

/** The limiter port: every store (memory, Redis, Upstash) implements it. */
export interface RateLimiter {
  limit(rule: LimitRule, identifier: string): Promise<LimitResult>;
}
