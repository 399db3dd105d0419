import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { Env } from "./route.ts";

/**
 * Told of every answered request: its method, the pattern of the route that answered
 * (`/api/v2/licenses/:licenseKey/schedule`, or a middleware's `/api/*` when none matched), its
 * status and how long the app took, in seconds.
 */
export type RequestObserver = (method: string, routePath: string, status: number, seconds: number) => void;

/**
 * Times each request from the app's first middleware to its answer, errors and 404s included, and
 * tells `observe` (the admin listener's metrics, admin/metrics.ts). Registered first, so it sees
 * the status every other layer settled on. Kept to two clock readings and one call a request: it
 * is on every request's path.
 *
 * @example
 * app.use("*", requestTiming(metrics.observeRequest));
 */
export function requestTiming(observe: RequestObserver): MiddlewareHandler<Env> {
  return async function requestTimingMiddleware(c, next) {
    const started = performance.now();
    await next();
    observe(c.req.method, routePath(c), c.res.status, (performance.now() - started) / 1000);
  };
}
