import type { Context } from "hono";
import type { OpenAPIHono, RouteConfig } from "@hono/zod-openapi";

/** What the entry hands the app about the connection (Hono's `c.env`). */
export interface ConnectionInfo {
  /** The socket peer's address. */
  remoteAddr?: string;
  /** The template of the route that answered (`/api/v2/groups`), set by `route()` for the request timing. */
  route?: string;
}

/**
 * `clientIp`: the request's client IP, once worked out (`requestClientIp`); `limitPassed`: the
 * verdict of a limit checked alongside the handler (`limitAlongside`).
 */
export type Env = { Bindings: ConnectionInfo; Variables: { clientIp: string; limitPassed: Promise<void> } };
export type App = OpenAPIHono<Env>;
export type Handler = (c: Context<Env>) => Response | Promise<Response>;

/**
 * Declares a route: its zod schemas go into the OpenAPI document, and `handler` answers it.
 * Handlers parse input themselves with the same schemas, because the contract's exact messages and
 * their order (and the streamed 64 KiB body limit) are not what a generic validator produces.
 *
 * @example
 * route(app, createRoute({ method: "get", path: "/api/v2/groups", responses }), (c) => json([]));
 */
export function route(app: App, config: RouteConfig, handler: Handler): void {
  app.openAPIRegistry.registerPath(config);
  const template = config.path;
  app.on(config.method.toUpperCase(), template.replace(/\{(\w+)\}/g, ":$1"), (c) => {
    // For the request timing (http/request-timing.ts), which reads it once the app has answered.
    if (c.env) c.env.route = template;
    return handler(c);
  });
}

/** The JSON content block of an OpenAPI response or request body. */
export function jsonContent<T>(schema: T, description: string) {
  return { content: { "application/json": { schema } }, description };
}
