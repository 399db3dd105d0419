import type { MiddlewareHandler } from "hono";
import type { Deps } from "../deps.ts";
import { requestClientIp } from "../http/client-ip.ts";
import type { Env } from "../http/route.ts";
import { enforceLimit } from "./enforce-limit.ts";
import type { FailMode, LimitRule } from "./limiter.ts";

/**
 * A rule of `limit` requests per minute (spec section 8: 10 per client IP on each kiosk route, a
 * bucket per route, so a kiosk polling its schedule can still validate its license). Fails open
 * unless told otherwise: kiosks keep working while the store is down.
 */
export const perMinute = (name: string, limit: number, failMode: FailMode = "open"): LimitRule => ({
  name,
  limit,
  windowMs: 60_000,
  failMode,
});

/**
 * A rule of `limit` requests per 24 hours (spec section 8: 3 onboardings per e-mail address). A
 * fixed window, as every rule here: it resets at 00:00 UTC.
 */
export const perDay = (name: string, limit: number, failMode: FailMode = "open"): LimitRule => ({
  name,
  limit,
  windowMs: 24 * 60 * 60_000,
  failMode,
});

/**
 * Limits the route by client IP before any other work on it (spec section 7 rule 2): a request
 * over `rule` gets 429 with Retry-After, and every answer of the route, refusals included, carries
 * the RateLimit-* headers. A limit checked inside the handler (`enforceLimit`) that set its own
 * RateLimit-* headers keeps them, as it is the narrower one.
 *
 * @example
 * app.use("/api/v2/license", limitByIp(deps, perMinute("license", 10)));
 */
export function limitByIp(deps: Deps, rule: LimitRule): MiddlewareHandler<Env> {
  return async function limitByIpMiddleware(c, next) {
    const headers = await enforceLimit(deps, rule, requestClientIp(c, deps.clientIpSource));
    await next();
    for (const [name, value] of Object.entries(headers)) {
      // Set on the response itself: c.header() after next() copies the whole response each time.
      if (!c.res.headers.has(name)) c.res.headers.set(name, value);
    }
  };
}
