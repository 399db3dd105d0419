import type { MiddlewareHandler } from "hono";
import type { Deps } from "../deps.ts";
import { Failure } from "../errors.ts";
import { clientIp } from "../http/client-ip.ts";
import type { Env } from "../http/route.ts";
import type { LimitRule } from "./limiter.ts";

/**
 * Spec section 8: 10 requests per minute per client IP on each limited route, a bucket per route
 * (a kiosk polling its schedule can still validate its license).
 */
export const perMinute = (name: string, limit: number): LimitRule => ({ name, limit, windowMs: 60_000 });

/**
 * Refuses a request over `rule` for its client IP with 429 and Retry-After, before any other work
 * on the route (spec section 7 rule 2).
 *
 * @example
 * app.use("/api/v2/license", limitByIp(deps, perMinute("license", 10)));
 */
export function limitByIp(deps: Deps, rule: LimitRule): MiddlewareHandler<Env> {
  return async function limitByIpMiddleware(c, next) {
    const ip = clientIp(c.req.raw, c.env, deps.trustProxy);
    const result = await deps.limiter.limit(rule, ip);
    if (!result.success) {
      const seconds = Math.max(1, Math.ceil((result.reset - deps.now()) / 1000));
      throw new Failure("rate_limited", { "retry-after": String(seconds) });
    }
    await next();
  };
}
