import { Failure } from "../errors.ts";
import { enforceLimit } from "./enforce-limit.ts";
import type { AppliedLimit, LimitPorts, LimitRule } from "./limiter.ts";

/**
 * The longest a refusal waits, on an instance that has not yet read the allowances beyond the
 * spec's (its first seconds), for that read: the refused client may be a registered venue. Only a
 * refusal waits; a request within the spec's limit never does.
 */
const FIRST_READ_WAIT_MS = 2_000;

/**
 * The limit `client` is counted against under `rule`: its allowance beyond the spec's where it has
 * one (`deps.venues`, from memory), else the rule itself with the client's own bucket
 * (`identifier`: its address, an IPv6 one by its network), exactly as the spec says.
 *
 * @example
 * clientLimit(deps, RULES.licenseSchedule, "203.0.113.7", "203.0.113.7"); // { rule, identifier }
 */
export function clientLimit(deps: Pick<LimitPorts, "venues">, rule: LimitRule, client: string, identifier = client): AppliedLimit {
  return deps.venues?.limitFor(rule, client, identifier) ?? { rule, identifier };
}

/**
 * `enforceLimit` for a client IP, with its allowance (`clientLimit`). A refusal at the spec's
 * limit on an instance that has not yet read the allowances waits for that first read (at most
 * FIRST_READ_WAIT_MS) and, if the client turns out to have one, is counted again against it: a cold
 * start must not refuse a venue its registration allows.
 *
 * @example
 * const headers = await enforceClientLimit(deps, RULES.license, requestClientIp(c, deps.clientIpSource), identifier);
 */
export async function enforceClientLimit(
  deps: Pick<LimitPorts, "limiter" | "now" | "venues">,
  rule: LimitRule,
  client: string,
  identifier = client,
  applied: AppliedLimit = clientLimit(deps, rule, client, identifier),
): Promise<Record<string, string>> {
  try {
    return await enforceLimit(deps, applied.rule, applied.identifier);
  } catch (error) {
    const venues = deps.venues;
    if (!(error instanceof Failure) || error.code !== "rate_limited" || !rule.perKiosk || !venues || venues.loaded) throw error;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([venues.firstLoad, new Promise((resolve) => (timer = setTimeout(resolve, FIRST_READ_WAIT_MS)))]);
    clearTimeout(timer);
    const late = clientLimit(deps, rule, client, identifier);
    if (late.identifier === applied.identifier && late.rule.limit === applied.rule.limit) throw error;
    return await enforceLimit(deps, late.rule, late.identifier);
  }
}
