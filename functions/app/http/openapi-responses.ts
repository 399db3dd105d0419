import type { RouteConfig } from "@hono/zod-openapi";
import { ErrorMessage } from "./error-message.ts";
import { type FailureCode, failures } from "../errors.ts";
import { BODY_DEADLINE_MS } from "./body.ts";
import { type App, jsonContent } from "./route.ts";

type DocumentedResponse = Exclude<RouteConfig["responses"][string], { $ref: string }>;
type Header = { description: string; required?: boolean; schema: { type: "integer" | "string"; minimum?: number; const?: string } };
type HeaderOrRef = Header | { $ref: string };

/**
 * The response headers several routes send, each described once, under `components/headers`.
 * A header a route may omit is not `required`; where it is always sent, the response says so.
 */
const headers = {
  "Retry-After": { description: "Whole seconds to wait before trying again", required: true, schema: { type: "integer", minimum: 1 } },
  "RateLimit-Limit": {
    description: "Requests this route allows a client per window. On every answer of a rate-limited route, unless its limiter's store was unavailable (then nothing is known)",
    schema: { type: "integer", minimum: 1 },
  },
  "RateLimit-Remaining": { description: "Requests left to this client in the current window (see RateLimit-Limit)", schema: { type: "integer", minimum: 0 } },
  "RateLimit-Reset": { description: "Whole seconds until the current window resets (see RateLimit-Limit)", schema: { type: "integer", minimum: 1 } },
  Age: {
    description: "Only on an answer from this instance's last known good copy, while the database is unavailable: whole seconds since that copy was read",
    schema: { type: "integer", minimum: 0 },
  },
  ETag: { description: "The schedule's `version` in double quotes; send it back in If-None-Match", required: true, schema: { type: "string" } },
} satisfies Record<string, Header>;

type HeaderName = keyof typeof headers;

/**
 * Puts the shared response headers under `components/headers`, where the responses below point.
 *
 * @example
 * registerResponseHeaders(app); // once, before the document is served
 */
export function registerResponseHeaders(app: App): void {
  for (const [name, header] of Object.entries(headers)) app.openAPIRegistry.registerComponent("headers", name, header);
}

function refs(...names: HeaderName[]): Record<string, HeaderOrRef> {
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

function withHeaders(response: DocumentedResponse, added: Record<string, HeaderOrRef>): DocumentedResponse {
  return { ...response, headers: { ...added, ...(response.headers as Record<string, HeaderOrRef> | undefined) } };
}

type MessageCode = { [C in FailureCode]: (typeof failures)[C][1] extends { message: string } ? C : never }[FailureCode];

/** A failure's exact message, quoted for a description: the document says what errors.ts answers. */
function message(code: MessageCode): string {
  return `\`${failures[code][1].message}\``;
}

const rateLimitHeaders = refs("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset");

/** 429 of a rate-limited route: over its limit, with Retry-After and the RateLimit-* headers. */
export const rateLimited = withHeaders(
  jsonContent(ErrorMessage, `${message("rate_limited")}: over the route's rate limit; Retry-After is when a request passes again`),
  refs("Retry-After"),
);

/**
 * The RateLimit-* headers on every response of a rate-limited route: the limiter adds them to
 * every answer, refusals included.
 */
export function withRateLimitHeaders(responses: Record<number, DocumentedResponse>): Record<number, DocumentedResponse> {
  return Object.fromEntries(Object.entries(responses).map(([status, response]) => [status, withHeaders(response, rateLimitHeaders)]));
}

/** A kiosk read's answer, which carries `Age` when it comes from the last known good copy. */
export function withAge(response: DocumentedResponse): DocumentedResponse {
  return withHeaders(response, refs("Age"));
}

/** A schedule read's 200 or 304: the version as ETag, how caches may keep it, `Age` when not fresh. */
export function versioned(response: DocumentedResponse, cacheControl: string): DocumentedResponse {
  return withAge(withHeaders(response, {
    ...refs("ETag"),
    "Cache-Control": {
      description: "Caches may keep the payload but must revalidate it before each use",
      required: true,
      schema: { type: "string", const: cacheControl },
    },
  }));
}

/** 503 while the database is unavailable, for a request that no last known good answer can stand in for. */
export function databaseUnavailable(when: string): DocumentedResponse {
  return withHeaders(jsonContent(ErrorMessage, `${message("service_unavailable")}: ${when}`), refs("Retry-After"));
}

/** 503 of a route whose rate limit fails closed, while the limiter's store is unavailable. */
export const rateLimitUnavailable = withHeaders(
  jsonContent(ErrorMessage, `${message("rate_limit_unavailable")}: the rate-limit store cannot be reached, and this route is never served unlimited`),
  refs("Retry-After"),
);

/** 413 of a route with a body. */
export const bodyTooLarge = jsonContent(ErrorMessage, message("body_too_large"));

/** 408 of a route with a body: the client did not finish sending it in time. */
export const bodyTimeout = jsonContent(ErrorMessage, `${message("body_timeout")}: the body did not arrive within ${BODY_DEADLINE_MS / 1000} seconds`);
