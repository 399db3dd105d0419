import { Failure } from "../errors.ts";
import { type LimitPorts, type LimitResult, type LimitRule, LimiterUnavailable } from "./limiter.ts";

/** Retry-After on a fail-closed refusal: long enough for Redis to reconnect, short enough not to stall a webhook. */
const RETRY_WHILE_UNAVAILABLE_S = 10;

/** A request counted against a rule: its RateLimit-* headers, and how to give it back. */
export interface CountedRequest {
  headers: Record<string, string>;
  /**
   * Gives the request back to its window, for a request the service itself failed: the limit counts
   * what the service carried out (or refused for the caller's fault), not its own failures. Best
   * effort: it never throws (a store that cannot take the refund keeps the count, as it would after
   * a crash), and does nothing when the store was unavailable and nothing was counted.
   */
  refund(): Promise<void>;
}

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
  deps: Pick<LimitPorts, "limiter" | "now">,
  rule: LimitRule,
  identifier: string,
): Promise<Record<string, string>> {
  return (await countRequest(deps, rule, identifier)).headers;
}

/**
 * `enforceLimit` for a request that may yet fail on the service's side: the same answers, and a
 * `refund` to call if it does.
 *
 * @example
 * const counted = await countRequest(deps, RULES.onboardingPerEmail, input.email);
 * try { await work(); } catch (error) { await counted.refund(); throw error; }
 */
export async function countRequest(
  deps: Pick<LimitPorts, "limiter" | "now" | "log">,
  rule: LimitRule,
  identifier: string,
): Promise<CountedRequest> {
  let result: LimitResult;
  try {
    result = await deps.limiter.limit(rule, identifier);
  } catch (error) {
    if (!(error instanceof LimiterUnavailable)) throw error;
    if (rule.failMode === "open") return { headers: {}, refund: () => Promise.resolve() };
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
  return {
    headers,
    refund: () =>
      deps.limiter.refund(rule, identifier, result.reset).catch((error: unknown) => {
        // The rule and why only: the identifier may be an e-mail.
        deps.log?.("warn", "rate_limit_refund_failed", { rule: rule.name, error: error instanceof Error ? error.name : "unknown" });
      }),
  };
}
