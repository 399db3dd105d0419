import { OpenAPIHono } from "@hono/zod-openapi";
import { lifecycleRoutes } from "./automations/routes.ts";
import { catalogueRoutes } from "./catalogue/routes.ts";
import type { Deps } from "./deps.ts";
import { isUnavailable } from "./db/unavailable.ts";
import { Failure, failureResponse, UNAVAILABLE_RETRY_AFTER_SECONDS } from "./errors.ts";
import { allowedMethods } from "./http/allowed-methods.ts";
import { cors } from "./http/cors.ts";
import { headContentLength } from "./http/head-content-length.ts";
import { serveOpenApiDocument } from "./http/openapi-document.ts";
import type { Env } from "./http/route.ts";
import { licenseRoutes } from "./license/routes.ts";
import { errorMessage, redact } from "./log.ts";
import { onboardingRoutes } from "./onboarding/routes.ts";
import { proclamationRoutes } from "./proclamations/routes.ts";
import { readPath } from "./read-path/read-path.ts";
import { scheduleRoutes } from "./schedule/routes.ts";

/**
 * The whole v2 interface as one Hono app. The entry (Deno.serve) and the tests build it the same way.
 *
 * @example
 * const app = createApp(deps);
 * Deno.serve((request, info) => app.fetch(request, { remoteAddr: info.remoteAddr.hostname }));
 */
export function createApp(deps: Deps): OpenAPIHono<Env> {
  const app = new OpenAPIHono<Env>();

  app.use("*", headContentLength());
  // Browser-based kiosks call the API cross-origin and poll schedules conditionally.
  app.use(
    "/api/*",
    cors({
      allowHeaders: [
        "Content-Type", "If-None-Match", "x-license-key", "x-email", "x-timestamp", "x-nonce", "x-signature",
        "Idempotency-Key", "webhook-id", "webhook-timestamp", "webhook-signature",
      ],
      allowMethods: ["GET", "POST", "PUT", "OPTIONS"],
      exposeHeaders: ["ETag", "Age", "Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Idempotent-Replayed"],
      maxAgeSeconds: 86400,
    }),
  );

  // The kiosk read layer, built once: every feature that serves a kiosk read composes this one.
  const reads = readPath(deps);
  catalogueRoutes(app, deps, reads);
  proclamationRoutes(app, deps, reads);
  scheduleRoutes(app, deps, reads);
  licenseRoutes(app, deps, reads);
  onboardingRoutes(app, deps);
  lifecycleRoutes(app, deps);

  serveOpenApiDocument(app);

  const allowed = allowedMethods(app);
  app.notFound((c) => {
    const methods = allowed(c.req.path);
    if (methods.length === 0) return failureResponse("not_found");
    return failureResponse("method_not_allowed", { allow: [...methods, "OPTIONS"].join(", ") });
  });
  app.onError((error, c) => {
    if (error instanceof Failure) {
      // A client that gave up mid-body is the client's doing: a line for the operator, not an error.
      if (error.code === "body_incomplete") deps.log("info", "request_abandoned", { method: c.req.method, path: redact(c.req.path) });
      return failureResponse(error.code, error.headers);
    }
    // Logged once per outage where it is detected (db/availability.ts), never per request.
    if (isUnavailable(error)) {
      return failureResponse("service_unavailable", { "retry-after": String(UNAVAILABLE_RETRY_AFTER_SECONDS) });
    }
    const requestId = crypto.randomUUID();
    deps.log("error", "request_failed", {
      requestId,
      method: c.req.method,
      // The path of PUT .../licenses/{key}/system-name is the key itself, that route's only credential.
      path: redact(c.req.path),
      error: redact(error instanceof Error ? `${error.name}: ${error.message}` : errorMessage(error)),
    });
    return Response.json({ message: "internal error", requestId }, { status: 500 });
  });
  return app;
}
