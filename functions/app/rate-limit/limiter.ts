import type { ClientIpSource } from "../http/client-ip.ts";
import type { Logger } from "../log.ts";
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
   * A kiosk route's rule: a registered venue address gets `limit` times its kiosks on top of what
   * the contract gives each address (venues/venue-limit.ts). Unset: the limit is the same for everyone.
   */
  perKiosk?: boolean;
}

/** The limit a request is counted against: the rule as it applies to this client, and its bucket. */
export interface AppliedLimit {
  rule: LimitRule;
  identifier: string;
}

/**
 * What some clients are allowed beyond the contract's limits (a registered venue address: venues/), as
 * this instance knows it, from memory. A port: this room knows no venue.
 */
export interface ClientAllowances {
  /**
   * The buckets a request of `client` is counted in under `rule`, in order, until one lets it
   * through: its own (`identifier`) first, never at less than the rule's limit.
   */
  limitsFor(rule: LimitRule, client: string, identifier: string): AppliedLimit[];
  /** Whether the allowances have been read at least once since the instance started. */
  readonly loaded: boolean;
  /** Settles when the first read has (successfully or not). */
  readonly firstLoad: Promise<void>;
}

/**
 * What limiting a request needs of the app: the limiter, the clock, the log (for refunds that
 * fail), and where a request's client IP comes from. `Deps` has all of it; the rate-limit room
 * names only this, so it never depends on the app that assembles it.
 */
export interface LimitPorts {
  limiter: RateLimiter;
  now: () => number;
  log?: Logger;
  clientIpSource: ClientIpSource;
  /** How many leading bits of an IPv6 client's address name its bucket (IPV6_RATE_LIMIT_PREFIX: rate-limit-client.ts). */
  ipv6PrefixLength: number;
  /** The registered venue addresses and their allowances, when the deployment reads them. */
  venues?: ClientAllowances;
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
  /**
   * Gives back one request of `identifier` counted in `rule`'s window that ends at `reset` (the
   * `reset` its check reported), for a request the service itself failed; nothing once that window
   * is over, so a refund never lends the next window a request. Rejects with `LimiterUnavailable`.
   */
  refund(rule: LimitRule, identifier: string, reset: number): Promise<void>;
}

/** The store did not answer in time or failed; the rule's `failMode` decides what happens. */
export class LimiterUnavailable extends Error {
  override name = "LimiterUnavailable";
}
