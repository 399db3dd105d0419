import { MAX_SKEW_SECONDS, NONCE, ONBOARDING_PATH, SIGNATURE, TIMESTAMP } from "../onboarding/signature.ts";
import { registerResponseHeaders } from "./openapi-responses.ts";
import type { App } from "./route.ts";

/** Where the document is served: integrators point their generators here. */
const OPENAPI_PATH = "/api/v2/openapi.json";

/**
 * The credentials the spec names (section 5), as security schemes. Every one is a header that
 * is not a secret on its own, so each is an `apiKey` scheme of its own, and a route asks for them
 * together. The exact answers stay those of the spec: 401 for any signature failure, 400 for a
 * lone or unpaired license header.
 */
const schemes = {
  onboardingTimestamp: {
    name: "x-timestamp",
    description: `Unix epoch seconds (\`${TIMESTAMP.source}\`), within ${MAX_SKEW_SECONDS} seconds of the server clock either way. Signed with the request: see onboardingSignature.`,
  },
  onboardingNonce: {
    name: "x-nonce",
    description: `Unique per request: printable ASCII without spaces (\`${NONCE.source}\`; a UUID is ideal). Each nonce is accepted once. Signed with the request: see onboardingSignature.`,
  },
  onboardingSignature: {
    name: "x-signature",
    description: [
      `The lowercase hexadecimal HMAC-SHA256 (\`${SIGNATURE.source}\`), keyed with the signing secret shared with the automation platform, of the canonical string:`,
      `five parts joined by a newline (\`\\n\`), in this order: \`POST\`, the path \`${ONBOARDING_PATH}\`, the x-timestamp value, the x-nonce value,`,
      "and the raw request body exactly as sent (its bytes, not a re-serialisation).",
      "Any failure (missing, malformed, expired, replayed or incorrect) is `401 {\"error\":\"invalid signature\"}`.",
    ].join(" "),
  },
  licenseKey: {
    name: "x-license-key",
    description: "A license key (`XXXX-XXXX-XXXX-XXXX`, A-Z and 0-9), sent together with x-email: the answer is then only the proclamations entitled to the key's owner. One without the other is `400 not-authorized`.",
  },
  accountEmail: {
    name: "x-email",
    description: "The e-mail of the license key's owner, sent together with x-license-key. A key that is not this account's is `400 this key doesn't appear to belong to you`.",
  },
} as const;

type SchemeName = keyof typeof schemes;

/** A security requirement: the schemes named, all together (none: no credential at all). */
function together(...names: SchemeName[]): Record<string, string[]> {
  return Object.fromEntries(names.map((name) => [name, []]));
}

/** Security requirements of the routes, by what each asks for. */
export const security = {
  /** The route takes no credential (the body or the query may carry a key, as its parameters say). */
  none: [],
  /** The signed onboarding webhook: all three headers, one HMAC over them and the body. */
  signedRequest: [together("onboardingTimestamp", "onboardingNonce", "onboardingSignature")],
  /** Optional, but paired: neither header (the whole list), or both (the entitled subset). */
  optionalLicensePair: [together(), together("licenseKey", "accountEmail")],
};

/**
 * The project's license: none is granted, the project is private. `identifier` (an SPDX
 * expression) is OpenAPI 3.1's; the generator's config is typed after 3.0's License Object,
 * which lacks it, so the object is given as a value rather than a literal.
 */
const license = { name: "Proprietary: all rights reserved", identifier: "LicenseRef-Proprietary" };

/**
 * Serves the OpenAPI 3.1 document of every declared route at `OPENAPI_PATH`, with what the routes
 * cannot say themselves: where the API runs, its license, the tags, the security schemes and the
 * shared response headers.
 *
 * @example
 * serveOpenApiDocument(app); // after every route is declared
 */
export function serveOpenApiDocument(app: App): void {
  for (const [scheme, { name, description }] of Object.entries(schemes)) {
    app.openAPIRegistry.registerComponent("securitySchemes", scheme, { type: "apiKey", in: "header", name, description });
  }
  registerResponseHeaders(app);
  app.doc31(OPENAPI_PATH, {
    openapi: "3.1.0",
    info: {
      title: "Cadence: listening-schedule and catalogue service",
      version: "2.0.0",
      description: [
        "The v2 interface of Cadence: the catalogue, proclamations, license validation, system names and listening schedules for kiosks, and a signed onboarding webhook for the automation platform.",
        "Every answer is `application/json` except a 304, which has no body. Errors carry `{\"message\": ...}`, except the onboarding signature's 401, which carries `{\"error\": ...}`.",
        "Routes that read the database may answer `503 {\"message\":\"service temporarily unavailable\"}` with `Retry-After` while it is unavailable; kiosk reads answered meanwhile from this instance's last known good copy carry `Age`.",
      ].join("\n\n"),
      license,
    },
    servers: [
      { url: "http://localhost:8000", description: "`npm start` on this machine" },
      {
        url: "https://{projectRef}.supabase.co/functions/v1",
        description: "The Supabase Edge Function `api` of a project",
        variables: { projectRef: { default: "your-project-ref", description: "The Supabase project's reference id" } },
      },
    ],
    tags: [
      { name: "catalogue", description: "Reference data and proclamations for kiosks" },
      { name: "license", description: "License validation and the kiosk's system name" },
      { name: "schedule", description: "Listening schedules, with conditional GET" },
      { name: "onboarding", description: "The automation platform's signed webhook" },
    ],
  });
}
