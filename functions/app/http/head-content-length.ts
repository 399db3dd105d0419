import type { MiddlewareHandler } from "hono";
import type { Env } from "./route.ts";

/**
 * A HEAD answer carries the Content-Length its GET would (RFC 9110, 9.3.2): Hono answers HEAD with
 * the GET's headers and no body, and a server then counts that missing body as 0 bytes
 * (`Deno.serve` wrote `Content-Length: 0` where the GET had 445). The GET's body is measured and
 * its length set before the body is dropped.
 *
 * @example
 * app.use("*", headContentLength());
 */
export function headContentLength(): MiddlewareHandler<Env> {
  return async function headContentLengthMiddleware(c, next) {
    await next();
    if (c.req.method !== "HEAD" || c.res.body === null || c.res.headers.has("content-length")) return;
    const length = (await c.res.clone().arrayBuffer()).byteLength;
    c.res.headers.set("content-length", String(length));
  };
}
