import { registerResponseHeaders } from "./openapi-responses.ts";
import type { App } from "./route.ts";

/** Where the document is served: integrators point their generators here. */
const OPENAPI_PATH = "/api/v2/openapi.json";

/**
 * The project's license: none is granted, the project is private. `identifier` (an SPDX
 * expression) is OpenAPI 3.1's; the generator's config is typed after 3.0's License Object,
 * which lacks it, so the object is given as a value rather than a literal.
 */
const license = { name: "Proprietary: all rights reserved", identifier: "LicenseRef-Proprietary" };

/**
 * Serves the OpenAPI 3.1 document of every declared route at `OPENAPI_PATH`, with what the routes
 * cannot say themselves: where the API runs, its license, the tags and the shared response headers.
 * Each feature registers the security schemes of its own credentials (`headerSchemes`).
 *
 * @example
 * serveOpenApiDocument(app); // after every route is declared
 */
export function serveOpenApiDocument(app: App): void {
  registerResponseHeaders(app);
  app.doc31(OPENAPI_PATH, (c) => {
    // Named for the request timing, as route() names every other route (http/request-timing.ts).
    if (c.env) c.env.route = OPENAPI_PATH;
    return {
      openapi: "3.1.0",
      info: {
        title: "Cadence: listening-schedule and catalogue service",
        version: "2.0.0",
        description: [
          "The v2 interface of Cadence: the catalogue, proclamations, license validation, system names and listening schedules for kiosks, and a signed onboarding webhook for the automation platform.",
          "Every answer is `application/json` except a 304, which has no body. Errors carry `{\"message\": ...}`, except the onboarding signature's 401, which carries `{\"error\": ...}`.",
          "Cadence also posts signed events (Standard Webhooks) about accounts, license keys and kiosks to endpoints its staff configure: the event types and payloads, how to verify them, retries and an example receiver are in the guide for integrators, functions/EVENTS.md in the Cadence repository.",
          "Routes that read the database may answer `503 {\"message\":\"service temporarily unavailable\"}` with `Retry-After` while it is unavailable; kiosk reads answered meanwhile from this instance's last known good copy carry `Age`.",
        ].join("\n\n"),
        license,
      },
      servers: servers(c.req.url),
      tags: [
        { name: "catalogue", description: "Reference data and proclamations for kiosks" },
        { name: "license", description: "License validation and the kiosk's system name" },
        { name: "schedule", description: "Listening schedules, with conditional GET" },
        { name: "onboarding", description: "The automation platform's signed webhook" },
      ],
    };
  });
}

/** Where the API runs: the server on this machine, and a Supabase project's edge function. */
function servers(requestUrl: string): Array<{ url: string; description: string; variables: Record<string, { default: string; description: string }> }> {
  return [
    {
      url: "http://localhost:{port}",
      description: "`npm start` on this machine",
      variables: { port: { default: localPort(requestUrl), description: "The port it listens on (PORT)" } },
    },
    {
      url: "https://{projectRef}.supabase.co/functions/v1",
      description: "The Supabase Edge Function `api` of a project",
      variables: { projectRef: { default: "your-project-ref", description: "The Supabase project's reference id" } },
    },
  ];
}

/** PORT's default, for a document not requested from a local server (the committed copy). */
const DEFAULT_LOCAL_PORT = "8000";

/** The port the document was requested on, when that was this machine: the PORT `npm start` was given. */
function localPort(requestUrl: string): string {
  const url = new URL(requestUrl);
  const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
  return loopback && url.port ? url.port : DEFAULT_LOCAL_PORT;
}
