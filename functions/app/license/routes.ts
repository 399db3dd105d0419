import { createRoute } from "@hono/zod-openapi";
import { ErrorMessage } from "../http/error-message.ts";
import type { Deps } from "../deps.ts";
import { Failure } from "../errors.ts";
import { readJsonObject } from "../http/body.ts";
import { json } from "../http/json.ts";
import { ageHeader } from "../http/age-header.ts";
import { batchWhileBusy, MAX_WRITE_BATCH } from "../read-path/batch-while-busy.ts";
import type { Known } from "../read-path/last-known-good.ts";
import type { ReadPath } from "../read-path/read-path.ts";
import { noCredential } from "../http/openapi-security.ts";
import { bodyTimeout, bodyTooLarge, databaseUnavailable, rateLimited, withAge, withRateLimitHeaders } from "../http/openapi-responses.ts";
import { type App, jsonContent, route } from "../http/route.ts";
import { sightingRecorder } from "../kiosk/record-sighting.ts";
import { limitFailedPairings } from "../rate-limit/failed-pairings.ts";
import { limitByIp } from "../rate-limit/middleware.ts";
import { RULES } from "../rate-limit/rules.ts";
import { LicenseKeyParam, LicenseRequest, LicenseResponse, SystemNameRequest, SystemNameResponse } from "./schemas.ts";
import { setSystemName } from "./set-system-name.ts";
import { type NameAsk, setSystemNames, validateAndNameLicenses, type Validation, type ValidationInput, validateLicenses } from "./store.ts";
import { validateLicense } from "./validate-license.ts";

/** What a body that is not a JSON object is, on the system-name route: an invalid name. */
const bodyFailuresAsInvalidName = new Set(["content_type", "body_required", "invalid_json"]);

/** How long a successful validation answers for its key and e-mail while the database is unavailable. */
export const VALIDATION_KEPT_MS = 24 * 60 * 60_000;

/** Sections 4.3 and 4.6: license validation and the kiosk's system name, each rate limited first. */
export function licenseRoutes(app: App, deps: Deps, readPath: ReadPath): void {
  const seen = sightingRecorder(deps);
  // Validations without a system name are a kiosk read (see validateLicenses): batched while a
  // statement runs, and a pair validated within VALIDATION_KEPT_MS answers as it did then while the
  // database is unavailable: 10,000 pairs, each a few hundred bytes (key, e-mail, owner's e-mail),
  // 4 MiB at most. Its last_validated_at is not written then: it keeps the last validation recorded.
  const validations = readPath.byKey({
    batch: (inputs: ValidationInput[], options) => validateLicenses(deps.db, inputs, options),
    // Identical validations (same key and e-mail) are asked once: their answers are the same.
    identity: ({ key, email }) => `${key}\n${email ?? ""}`,
    lastKnownGood: {
      capacity: 10_000,
      maxBytes: 4 << 20,
      sizeOf: (known: Validation) => known.outcome === "valid" ? known.ownerEmail.length : 0,
      maxAgeMs: VALIDATION_KEPT_MS,
      keep: (known: Validation) => known.outcome === "valid",
    },
  });
  // Writes (a system name, a validation that sets one) are batched the same way, one statement at a
  // time per route, through the write lane: a fleet booting at once costs one statement a batch,
  // not one a kiosk queued behind the lane's few connections. They have no last known good.
  const namingValidations = batchWhileBusy(
    (inputs: Array<ValidationInput & { systemName: string }>, options) => validateAndNameLicenses(deps.writes, inputs, options),
    MAX_WRITE_BATCH,
  );
  const names = batchWhileBusy((asks: NameAsk[], options) => setSystemNames(deps.writes, asks, options), MAX_WRITE_BATCH);
  const check = (input: ValidationInput): Promise<Known<Validation>> =>
    input.systemName === null
      ? validations(`${input.key}\n${input.email}`, (read) => read(input))
      : namingValidations({ ...input, systemName: input.systemName }).then((value) => ({ value, age: null }));

  app.use("/api/v2/license", limitByIp(deps, RULES.license), limitFailedPairings(deps));
  route(
    app,
    createRoute({
      method: "post",
      path: "/api/v2/license",
      operationId: "validateLicense",
      summary: "Validate a license key against its owner's e-mail, optionally setting the system name",
      tags: ["license"],
      // The credentials are the body's key and e-mail: fields, not a scheme.
      security: noCredential,
      request: { body: { ...jsonContent(LicenseRequest, "The key, the owner's e-mail and an optional system name"), required: true } },
      responses: withRateLimitHeaders({
        200: withAge(jsonContent(LicenseResponse, "The key is valid; systemNameStatus tells what became of the system name")),
        400: jsonContent(ErrorMessage, "Malformed body, a missing field, or a key that fails validation"),
        408: bodyTimeout,
        413: bodyTooLarge,
        429: rateLimited,
        503: databaseUnavailable(
          "the database is unavailable, and the request sets a system name or this instance validated this key and e-mail in none of the last 24 hours",
        ),
      }),
    }),
    async (c) => {
      const { value, age } = await validateLicense(check, await readJsonObject(c.req.raw));
      seen(c, value.key, { starting: true });
      return json(value, 200, ageHeader(age));
    },
  );

  app.use("/api/v2/licenses/:licenseKey/system-name", limitByIp(deps, RULES.systemName));
  route(
    app,
    createRoute({
      method: "put",
      path: "/api/v2/licenses/{licenseKey}/system-name",
      operationId: "setSystemName",
      summary: "Set the kiosk's system name on a license key",
      tags: ["license"],
      security: noCredential,
      request: {
        params: LicenseKeyParam,
        body: { ...jsonContent(SystemNameRequest, "The new name"), required: true },
      },
      responses: withRateLimitHeaders({
        200: jsonContent(SystemNameResponse, "The stored name (also when it was already the name: nothing is written)"),
        400: jsonContent(ErrorMessage, "`invalid_name`: the body is not a JSON object with a valid systemName"),
        404: jsonContent(ErrorMessage, "`unknown_license`"),
        408: bodyTimeout,
        409: jsonContent(ErrorMessage, "`name_taken`: another key of the same account has a name that looks the same: regardless of case, compatibility forms (fullwidth, mathematical, circled letters), repeated spaces and look-alike letters of another script in the name"),
        413: bodyTooLarge,
        429: rateLimited,
        503: databaseUnavailable("the database is unavailable"),
      }),
    }),
    async (c) => {
      const body = await readJsonObject(c.req.raw).catch((error: unknown) => {
        // The contract gives this route one 400: a missing or non-JSON content type, an empty body and
        // malformed JSON are all a name that was not given as it must be.
        if (error instanceof Failure && bodyFailuresAsInvalidName.has(error.code)) throw new Failure("invalid_name");
        throw error;
      });
      const named = await setSystemName(names, c.req.param().licenseKey, body);
      seen(c, c.req.param().licenseKey, { systemName: named.systemName, starting: true });
      return json(named);
    },
  );
}
