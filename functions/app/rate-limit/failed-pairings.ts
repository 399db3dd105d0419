import type { MiddlewareHandler } from "hono";
import { Failure, failureResponse, type FailureCode } from "../errors.ts";
import type { Env } from "../http/route.ts";
import { rateLimitIdentifier } from "../rate-limit-client.ts";
import { enforceLimit } from "./enforce-limit.ts";
import type { LimitPorts } from "./limiter.ts";
import { RULES } from "./rules.ts";

/**
 * The answers that tell a caller something about a key and an e-mail it does not hold as a pair:
 * whether the e-mail has an account (`this key doesn't appear to belong to you` against
 * `not-authorized`, `user does not exist` against `key does not belong to specified user`) or
 * whether a key exists. Asked at speed, they enumerate accounts.
 */
const FAILED_PAIRINGS = new Set<FailureCode>([
  "not_authorized",
  "key_not_yours",
  "license_not_found",
  "license_inactive",
  "user_not_found",
  "key_not_owned",
]);

/**
 * Counts each failed pairing the route answers against its client (`RULES.failedPairings`, one
 * count shared by every route that pairs a key with an e-mail), and answers 429 with Retry-After,
 * in place of the failure, once the client is over it. Only failures are counted, after the
 * answer is known: a request that pairs is never checked, so a kiosk with a valid pair waits no
 * extra round trip and is never refused by this limit, whatever else its address sends.
 *
 * @example
 * app.use("/api/v2/proclamations", limitFailedPairings(deps));
 */
export function limitFailedPairings(deps: LimitPorts): MiddlewareHandler<Env> {
  return async function limitFailedPairingsMiddleware(c, next) {
    await next();
    // Hono has already answered a thrown failure through onError; `c.error` says which it was.
    const failure = c.error;
    if (!(failure instanceof Failure) || !FAILED_PAIRINGS.has(failure.code)) return;
    try {
      await enforceLimit(deps, RULES.failedPairings, rateLimitIdentifier(c, deps.clientIpSource, deps.ipv6PrefixLength));
    } catch (refusal) {
      if (!(refusal instanceof Failure)) throw refusal;
      c.res = failureResponse(refusal.code, refusal.headers);
    }
  };
}
