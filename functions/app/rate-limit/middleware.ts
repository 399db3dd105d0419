import type { Context, MiddlewareHandler } from "hono";
import { requestClientIp } from "../http/client-ip.ts";
import type { Env } from "../http/route.ts";
import { rateLimitIdentifier } from "../rate-limit-client.ts";
import { clientLimits, enforceClientLimit, refusedFromMemory } from "./client-limit.ts";
import type { LimitPorts, LimitRule } from "./limiter.ts";

/**
 * Limits the route by client IP (a registered venue address: by its own bucket and then its registration's, `clientLimits`)
 * before any other work on it (as the contract's 429s say): a request
 * over `rule` gets 429 with Retry-After, and every answer of the route, refusals included, carries
 * the RateLimit-* headers. A limit checked inside the handler (`enforceLimit`) that set its own
 * RateLimit-* headers keeps them, as it is the narrower one.
 *
 * @example
 * app.use("/api/v2/license", limitByIp(deps, RULES.license));
 */
export function limitByIp(deps: LimitPorts, rule: LimitRule): MiddlewareHandler<Env> {
  return async function limitByIpMiddleware(c, next) {
    const headers = await enforceClientLimit(deps, rule, requestClientIp(c, deps.clientIpSource), rateLimitIdentifier(c, deps.clientIpSource, deps.ipv6PrefixLength));
    await next();
    setLimitHeaders(c, headers);
  };
}

/**
 * Limits a read-only route by client IP while its handler reads: the handler starts at once, so
 * its database read and the limit check overlap, and a kiosk waits for the later of the two rather
 * than their sum. The limit's verdict still comes first: the handler awaits `limitPassed(c)` before
 * anything it records, and a refusal is the answer whatever the handler answered (its read is
 * discarded). A client this process already knows to be refused in the window starts no handler,
 * so a flood from one address costs about one window's limit of reads.
 *
 * @example
 * app.use("/api/v2/licenses/:licenseKey/schedule", limitAlongside(deps, RULES.licenseSchedule));
 */
export function limitAlongside(deps: LimitPorts, rule: LimitRule): MiddlewareHandler<Env> {
  return async function limitAlongsideMiddleware(c, next) {
    const client = requestClientIp(c, deps.clientIpSource);
    const identifier = rateLimitIdentifier(c, deps.clientIpSource, deps.ipv6PrefixLength);
    const limits = clientLimits(deps, rule, client, identifier);
    const refused = refusedFromMemory(deps, limits);
    const verdict = enforceClientLimit(deps, rule, client, identifier, limits);
    if (refused) await verdict;
    const passed = verdict.then(() => {});
    // Both are settled below or by the handler; a refusal must not surface as unhandled meanwhile.
    verdict.catch(() => {});
    passed.catch(() => {});
    c.set("limitPassed", passed);
    await next();
    setLimitHeaders(c, await verdict);
  };
}

/** Resolves once the route's limit (`limitAlongside`) has let the request through; rejects with its refusal. */
export function limitPassed(c: Context<Env>): Promise<void> {
  return c.get("limitPassed") ?? Promise.resolve();
}

function setLimitHeaders(c: Context<Env>, headers: Record<string, string>) {
  for (const [name, value] of Object.entries(headers)) {
    // Set on the response itself: c.header() after next() copies the whole response each time.
    if (!c.res.headers.has(name)) c.res.headers.set(name, value);
  }
}
