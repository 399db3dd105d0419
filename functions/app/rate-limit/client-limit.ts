import { Failure } from "../errors.ts";
import { enforceLimit } from "./enforce-limit.ts";
import type { AppliedLimit, LimitPorts, LimitRule } from "./limiter.ts";

/**
 * The longest a refusal waits, on an instance that has not yet read the allowances beyond the
 * contract's (its first seconds), for that read: the refused client may be a registered venue. Only a
 * refusal waits; a request within the contract's limit never does.
 */
const FIRST_READ_WAIT_MS = 2_000;

/**
 * The buckets `client` is counted in under `rule`, in order, until one lets the request through:
 * its own (`identifier`: its address, an IPv6 one by its network) at the contract's limit or more,
 * then any allowance beyond the contract's it has (`deps.venues`, from memory).
 *
 * @example
 * clientLimits(deps, RULES.licenseSchedule, "203.0.113.7", "203.0.113.7"); // [{ rule, identifier }]
 */
export function clientLimits(deps: Pick<LimitPorts, "venues">, rule: LimitRule, client: string, identifier = client): AppliedLimit[] {
  return deps.venues?.limitsFor(rule, client, identifier) ?? [{ rule, identifier }];
}

/** Whether this process already knows every bucket of `limits` to refuse the request in its window (no store asked). */
export function refusedFromMemory(deps: Pick<LimitPorts, "limiter">, limits: AppliedLimit[]): boolean {
  return limits.every((limit) => deps.limiter.isRefused(limit.rule, limit.identifier));
}

/**
 * `enforceLimit` for a client IP through its buckets (`clientLimits`): the first that lets the
 * request through answers; a request every bucket refuses gets the last refusal (every bucket of a
 * rule shares its window, so `Retry-After` is the same). A refusal on an instance that has not yet
 * read the allowances waits for that first read (at most FIRST_READ_WAIT_MS) and is counted again
 * in the buckets it then has and had not tried: a cold start must not refuse a venue its
 * registration allows.
 *
 * @example
 * const headers = await enforceClientLimit(deps, RULES.license, requestClientIp(c, deps.clientIpSource), identifier);
 */
export async function enforceClientLimit(
  deps: Pick<LimitPorts, "limiter" | "now" | "venues">,
  rule: LimitRule,
  client: string,
  identifier = client,
  limits: AppliedLimit[] = clientLimits(deps, rule, client, identifier),
): Promise<Record<string, string>> {
  let refusal: unknown;
  for (const limit of limits) {
    try {
      return await enforceLimit(deps, limit.rule, limit.identifier);
    } catch (error) {
      if (!(error instanceof Failure) || error.code !== "rate_limited") throw error;
      refusal = error;
    }
  }
  const venues = deps.venues;
  if (!rule.perKiosk || !venues || venues.loaded) throw refusal;
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([venues.firstLoad, new Promise((resolve) => (timer = setTimeout(resolve, FIRST_READ_WAIT_MS)))]);
  clearTimeout(timer);
  const tried = (late: AppliedLimit) => limits.some((limit) => limit.identifier === late.identifier && limit.rule.limit === late.rule.limit);
  const untried = clientLimits(deps, rule, client, identifier).filter((late) => !tried(late));
  if (untried.length === 0) throw refusal;
  return await enforceClientLimit({ ...deps, venues: undefined }, rule, client, identifier, untried);
}
