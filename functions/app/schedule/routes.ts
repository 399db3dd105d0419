import { createRoute, z } from "@hono/zod-openapi";
import { ErrorMessage } from "../http/error-message.ts";
import type { Deps } from "../deps.ts";
import { Email, normalizeEmail } from "../email.ts";
import { Failure } from "../errors.ts";
import { jsonText } from "../http/json.ts";
import { ageHeader } from "../http/age-header.ts";
import { noCredential } from "../http/openapi-security.ts";
import { databaseUnavailable, rateLimited, versioned, withAge, withRateLimitHeaders } from "../http/openapi-responses.ts";
import { type App, jsonContent, route } from "../http/route.ts";
import { sightingRecorder } from "../kiosk/record-sighting.ts";
import { LicenseKey } from "../license-key.ts";
import { requirePaired } from "../pairing.ts";
import { limitFailedPairings } from "../rate-limit/failed-pairings.ts";
import { limitAlongside, limitPassed } from "../rate-limit/middleware.ts";
import { RULES } from "../rate-limit/rules.ts";
import { ifNoneMatch } from "./if-none-match.ts";
import { scheduleReads } from "./read-schedules.ts";
import type { ReadPath } from "../read-path/read-path.ts";
import { SchedulePayload, ScheduleResponse } from "./schemas.ts";

/**
 * Caches may keep the payload but must revalidate it before each use: staff edits reach kiosks on
 * their next poll, and a revalidation costs a 304 with no body.
 */
export const SCHEDULE_CACHE_CONTROL = "no-cache";

const licenseSchedule = createRoute({
  method: "get",
  path: "/api/v2/licenses/{licenseKey}/schedule",
  operationId: "getLicenseSchedule",
  summary: "The schedule of a license key, with conditional GET",
  tags: ["schedule"],
  security: noCredential,
  request: {
    params: z.object({ licenseKey: LicenseKey }),
    headers: z.object({ "if-none-match": z.string().optional() }),
  },
  responses: withRateLimitHeaders({
    200: versioned(jsonContent(SchedulePayload, "The schedule payload"), SCHEDULE_CACHE_CONTROL),
    304: versioned({ description: "If-None-Match matches the current ETag; no body" }, SCHEDULE_CACHE_CONTROL),
    404: jsonContent(ErrorMessage, "`unknown_license`"),
    429: rateLimited,
    503: databaseUnavailable("the database is unavailable and this instance never served this key's schedule"),
  }),
});

const LegacyQuery = z.object({
  email: Email,
  licenseKey: LicenseKey.optional(),
  key: LicenseKey.optional().openapi({ description: "Alias of licenseKey" }),
});

const legacySchedule = createRoute({
  method: "get",
  path: "/api/v2/schedule",
  operationId: "getLegacySchedule",
  summary: "Legacy schedule read with e-mail and license key in the query",
  tags: ["schedule"],
  // The credentials are the query's e-mail and key, checked as a pair: parameters, not a scheme.
  security: noCredential,
  request: { query: LegacyQuery },
  responses: withRateLimitHeaders({
    200: withAge(jsonContent(ScheduleResponse, "The e-mail and the schedule payload")),
    400: jsonContent(ErrorMessage, "`not-authorized` or `this key doesn't appear to belong to you`"),
    429: rateLimited,
    503: databaseUnavailable("the database is unavailable and this instance never answered this key and e-mail"),
  }),
});

/** Sections 4.4 and 4.5: the legacy schedule read and the license schedule read. */
export function scheduleRoutes(app: App, deps: Deps, readPath: ReadPath): void {
  const reads = scheduleReads(deps, readPath);
  const seen = sightingRecorder(deps);

  app.use("/api/v2/licenses/:licenseKey/schedule", limitAlongside(deps, RULES.licenseSchedule));
  route(app, licenseSchedule, async (c) => {
    const key = LicenseKey.safeParse(c.req.param("licenseKey"));
    if (!key.success) throw new Failure("unknown_license");
    const { value: payload, age } = await reads.ofKey(key.data);
    await limitPassed(c);
    if (payload === null) throw new Failure("unknown_license");
    const { version, body } = payload;
    const headers = { etag: `"${version}"`, "cache-control": SCHEDULE_CACHE_CONTROL, ...ageHeader(age) };
    // The version it now holds: sent in the 200, or the one its If-None-Match named for the 304.
    seen(c, key.data, { version });
    if (ifNoneMatch(c.req.header("if-none-match"), version)) return new Response(null, { status: 304, headers });
    return jsonText(body, 200, headers);
  });

  app.use("/api/v2/schedule", limitAlongside(deps, RULES.legacySchedule), limitFailedPairings(deps));
  route(app, legacySchedule, async (c) => {
    // A missing parameter reads as "", which neither schema accepts.
    const email = Email.safeParse(normalizeEmail(c.req.query("email") ?? ""));
    const key = LicenseKey.safeParse((c.req.query("licenseKey") ?? c.req.query("key") ?? "").trim());
    if (!email.success || !key.success) throw new Failure("not_authorized");
    const { value: { outcome, payload }, age } = await reads.legacy(key.data, email.data);
    await limitPassed(c);
    requirePaired(outcome);
    if (payload === null) throw new Failure("not_authorized");
    seen(c, key.data, { version: payload.version });
    // The served body is `{"version":…,…}`: put the e-mail in front rather than serialise it all again.
    return jsonText(`{"email":${JSON.stringify(email.data)},${payload.body.slice(1)}`, 200, ageHeader(age));
  });
}
