import type { AppliedLimit, LimitRule } from "../rate-limit/limiter.ts";

/** A registered venue address as the limiter uses it: the bucket its kiosks share, and how many kiosks it holds. */
export interface Venue {
  /**
   * The rate-limit identifier: the address itself for an IPv4 /32 (its own bucket, so its count
   * carries over from before it was registered), else the network (`203.0.113.0/28`,
   * `2001:db8:1:1::/64`, which is an IPv6 client's own bucket at the default prefix).
   */
  identifier: string;
  /** Every registration of this network added up: accounts sharing one address each register their own kiosks. */
  kiosks: number;
}

/**
 * The buckets a request of a kiosk route (`perKiosk`) is counted in, in order, until one lets it
 * through. A registration only adds, so no registration can lower what an address would have
 * without it:
 * - first the client's own bucket (`identifier`) at the contract's limit, or at its kiosks times that
 *   limit when a registration is exactly that client (an IPv4 /32, an IPv6 network of the client's
 *   prefix: one bucket, so a count carries over when it is registered mid-window);
 * - then, past it, each registered range holding the address, most specific first: a bucket the
 *   range's addresses share, of its kiosks times the limit.
 * Anywhere else, and on every other route, the rule itself with the client's own bucket.
 *
 * @example
 * venueLimits([{ identifier: "203.0.113.0/28", kiosks: 20 }], RULES.licenseSchedule, "203.0.113.7");
 * // [{ rule: RULES.licenseSchedule, identifier: "203.0.113.7" }, { rule: { ...limit: 200 }, identifier: "203.0.113.0/28" }]
 */
export function venueLimits(venues: readonly Venue[], rule: LimitRule, identifier: string): AppliedLimit[] {
  if (!rule.perKiosk || venues.length === 0) return [{ rule, identifier }];
  const own = venues[0].identifier === identifier ? venues[0] : undefined;
  const limits: AppliedLimit[] = [{ rule: own ? times(rule, own.kiosks) : rule, identifier }];
  for (const venue of own ? venues.slice(1) : venues) limits.push({ rule: times(rule, venue.kiosks), identifier: venue.identifier });
  return limits;
}

const times = (rule: LimitRule, kiosks: number): LimitRule => ({ ...rule, limit: rule.limit * kiosks });
