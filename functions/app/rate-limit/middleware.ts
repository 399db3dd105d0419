import type { MiddlewareHandler } from "hono";
import type { Deps } from "../deps.ts";
import { requestClientIp } from "../http/client-ip.ts";
import type { Env } from "../http/route.ts";
import { enforceLimit } from "./enforce-limit.ts";
import type { LimitRule } from "./limiter.ts";

/**
 * Limits the route by client IP before any other work on it (spec section 7 rule 2): a request
 * over `rule` gets 429 with Retry-After, and every answer of the route, refusals included, carries
 * the RateLimit-* headers. A limit checked inside the handler (`enforceLimit`) that set its own
 * RateLimit-* headers keeps them, as it is the narrower one.
 *
 * @example
 * app.use("/api/v2/license", limitByIp(deps, RULES.license));
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
