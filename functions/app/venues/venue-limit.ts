import type { AppliedLimit, LimitRule } from "../rate-limit/limiter.ts";
import type { Venue } from "./venue-allowances.ts";

/**
 * The limit of a kiosk route (`perKiosk`) at a registered venue address: the rule's limit times
 * its kiosks, in the registration's bucket; anywhere else, and on every other route, the rule
 * itself with the client's own bucket (`identifier`), exactly as the spec says.
 *
 * @example
 * venueLimit({ identifier: "203.0.113.0/28", kiosks: 20 }, RULES.licenseSchedule, "203.0.113.7"); // { rule: { ...limit: 200 }, identifier: "203.0.113.0/28" }
 */
export function venueLimit(venue: Venue | undefined, rule: LimitRule, identifier: string): AppliedLimit {
  return rule.perKiosk && venue ? { rule: { ...rule, limit: rule.limit * venue.kiosks }, identifier: venue.identifier } : { rule, identifier };
}
