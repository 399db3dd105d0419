import { Failure } from "../errors.ts";
import { enforceLimit } from "./enforce-limit.ts";
import type { LimitPorts, LimitRule } from "./limiter.ts";

/**
 * The longest a refusal waits, on an instance that has not yet read the registered venue addresses
 * (its first seconds), for that read: the refused client may be a registered venue. Only a refusal
 * waits; a request within the contract's limit never does.
 */
const FIRST_READ_WAIT_MS = 2_000;

/** The limit a request is counted against: the rule as it applies to this client, and its bucket. */
export interface AppliedLimit {
  rule: LimitRule;
  identifier: string;
}

/**
 * The limit of a kiosk route (`perKiosk`) for `client`: at a registered venue address, the rule's
 * limit times its kiosks, in the registration's bucket; anywhere else, and on every other route,
 * the rule itself with the client's own bucket (`identifier`: its address, an IPv6 one by its
 * network), exactly as the contract says. From memory only (`venues`, read in the background).
 *
 * @example
 * venueLimit(deps, RULES.licenseSchedule, "203.0.113.7"); // { rule: { ...limit: 200 }, identifier: "203.0.113.0/28" }
 */
export function venueLimit(deps: Pick<LimitPorts, "venues">, rule: LimitRule, client: string, identifier = client): AppliedLimit {
  const venue = rule.perKiosk ? deps.venues?.lookup(client) : undefined;
  return venue ? { rule: { ...rule, limit: rule.limit * venue.kiosks }, identifier: venue.identifier } : { rule, identifier };
}

/**
 * `enforceLimit` for a client IP, with its venue's allowance (`venueLimit`). A refusal at the contract's
 * limit on an instance that has not yet read the registrations waits for that first read (at most
 * FIRST_READ_WAIT_MS) and, if the client turns out to be a registered venue, is counted again
 * against the venue's allowance: a cold start must not refuse a venue its registration allows.
 *
 * @example
 * const headers = await enforceClientLimit(deps, RULES.license, requestClientIp(c, deps.clientIpSource), identifier);
 */
export async function enforceClientLimit(
  deps: Pick<LimitPorts, "limiter" | "now" | "venues">,
  rule: LimitRule,
  client: string,
  identifier = client,
  applied: AppliedLimit = venueLimit(deps, rule, client, identifier),
): Promise<Record<string, string>> {
  try {
    return await enforceLimit(deps, applied.rule, applied.identifier);
  } catch (error) {
    const venues = deps.venues;
    if (!(error instanceof Failure) || error.code !== "rate_limited" || !rule.perKiosk || !venues || venues.loaded) throw error;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([venues.firstLoad, new Promise((resolve) => (timer = setTimeout(resolve, FIRST_READ_WAIT_MS)))]);
    clearTimeout(timer);
    const late = venueLimit(deps, rule, client, identifier);
    if (late.identifier === applied.identifier && late.rule.limit === applied.rule.limit) throw error;
    return await enforceLimit(deps, late.rule, late.identifier);
  }
}
