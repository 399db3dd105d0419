import type { Deps } from "../deps.ts";
import { Failure } from "../errors.ts";
import { type LimitResult, type LimitRule, LimiterUnavailable } from "./limiter.ts";

/** Retry-After on a fail-closed refusal: long enough for Redis to reconnect, short enough not to stall a webhook. */
const RETRY_WHILE_UNAVAILABLE_S = 10;

/**
 * Counts one request of `identifier` against `rule`, and answers with the standard rate-limit
 * headers for the response:
 * - within the limit: resolves to `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`;
 * - over it: throws `rate_limited` (429) with those headers and `Retry-After`, both the whole
 *   seconds until the window resets (at least 1), which is exactly when a request passes again;
 * - store down or slow: a rule that fails open resolves to no headers (nothing is known), one that
 *   fails closed throws `rate_limit_unavailable` (503) with `Retry-After`.
 *
 * @example
 * const headers = await enforceLimit(deps, RULES.onboardingPerEmail, normalizeEmail(email));
 */
export async function enforceLimit(
  deps: Pick<Deps, "limiter" | "now">,
  rule: LimitRule,
  identifier: string,
): Promise<Record<string, string>> {
  let result: LimitResult;
  try {
    result = await deps.limiter.limit(rule, identifier);
  } catch (error) {
    if (!(error instanceof LimiterUnavailable)) throw error;
    if (rule.failMode === "open") return {};
    throw new Failure("rate_limit_unavailable", { "Retry-After": String(RETRY_WHILE_UNAVAILABLE_S) });
  }
  // @upstash/ratelimit reports `reset` in epoch milliseconds; the headers want seconds from now.
  const seconds = String(Math.max(1, Math.ceil((result.reset - deps.now()) / 1000)));
  const headers = {
    "RateLimit-Limit": String(result.limit),
    "RateLimit-Remaining": String(result.remaining),
    "RateLimit-Reset": seconds,
  };
  if (!result.success) throw new Failure("rate_limited", { ...headers, "Retry-After": seconds });
  return headers;
}
