import type { ConnectionInfo } from "./route.ts";

/**
 * Told of every answered request: its method, the template of the route that answered
 * (`/api/v2/licenses/{licenseKey}/schedule`, or `""` when none did: a 404, a CORS preflight), its
 * status and how long the app took, in seconds.
 */
export type RequestObserver = (method: string, route: string, status: number, seconds: number) => void;

/** The app's fetch, as the entry calls it. */
export type AppFetch = (request: Request, env: ConnectionInfo) => Response | Promise<Response>;

/**
 * `fetch`, each request timed from the app's start to its answer, errors and 404s included, and
 * told to `observe` (the admin listener's metrics, admin/metrics.ts). Around the app rather than a
 * middleware inside it: a Hono middleware layer and its route lookup cost more than the
 * observation itself on the fastest routes (a catalogue read's 20 µs); the route's template is
 * what `route()` (http/route.ts) left on the request's `env`.
 *
 * @example
 * const handler = timedFetch((request, env) => app.fetch(request, env), metrics.observeRequest);
 */
export function timedFetch(fetch: AppFetch, observe: RequestObserver): (request: Request, env: ConnectionInfo) => Promise<Response> {
  return async (request, env) => {
    const started = performance.now();
    const response = await fetch(request, env);
    observe(request.method, env.route ?? "", response.status, (performance.now() - started) / 1000);
    return response;
  };
}
