/**
 * Every failure the API answers with, by stable code: status and body, exactly as the contract words them.
 * Use cases throw `new Failure(code)`; `failureResponse` is the one place that turns a code into HTTP.
 */
export const failures = {
  not_found: [404, { message: "not found" }],
  method_not_allowed: [405, { message: "method not allowed" }],
  internal: [500, { message: "internal error" }],
  rate_limited: [429, { message: "too many requests" }],
  // A rule that fails closed, while its store is down or slow (rate-limit/limiter.ts FailMode).
  rate_limit_unavailable: [503, { message: "rate limiting is unavailable, try again shortly" }],
  // The database is unavailable and no last known good answer can stand in (db/availability.ts).
  service_unavailable: [503, { message: "service temporarily unavailable" }],
  body_too_large: [413, { message: "request body must not exceed 64 KiB" }],
  body_timeout: [408, { message: "request body was not received in time" }],
  // The client closed its connection mid-body: nobody reads this answer, and it is no server error.
  body_incomplete: [400, { message: "request body ended before it was complete" }],
  // Catalogue and schedule pairing (4.2, 4.4).
  not_authorized: [400, { message: "not-authorized" }],
  key_not_yours: [400, { message: "this key doesn't appear to belong to you" }],
  // License validation (4.3).
  content_type: [400, { message: "content-type must be application/json" }],
  invalid_json: [400, { message: "invalid JSON body" }],
  body_required: [400, { message: "request body is required" }],
  license_key_required: [400, { message: "license_key is required" }],
  email_address_required: [400, { message: "email_address is required" }],
  license_not_found: [400, { message: "license key not found" }],
  license_inactive: [400, { message: "license key is not active" }],
  user_not_found: [400, { message: "user does not exist" }],
  key_not_owned: [400, { message: "key does not belong to specified user" }],
  // License schedule read and system name (4.5, 4.6).
  unknown_license: [404, { message: "unknown_license" }],
  invalid_name: [400, { message: "invalid_name" }],
  name_taken: [409, { message: "name_taken" }],
  // Onboarding (4.7).
  email_required: [400, { message: "email is required" }],
  email_invalid: [400, { message: "email must be a valid e-mail address of at most 254 characters" }],
  name_invalid: [400, { message: "name must be a string of at most 120 characters" }],
  invalid_signature: [401, { error: "invalid signature" }],
  account_not_created: [500, { message: "the account could not be created" }],
  // Safe retries of onboarding (Idempotency-Key, or Standard Webhooks' webhook-id): not in the contract,
  // which names no id; only a request that carries one can meet them.
  idempotency_key_invalid: [400, { message: "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces" }],
  idempotency_key_in_progress: [409, { message: "a request with this idempotency key is still in progress; retry shortly" }],
  idempotency_key_reused: [422, { message: "this idempotency key was already used with a different request body" }],
  // The signed lifecycle calls (automations/): not in the contract, which names only onboarding.
  // unknown_license (404) and name_taken (409) keep the contract's words for the same facts.
  // Each body names its call (`type`): Standard Webhooks does not sign the path, so a body signed
  // for one call must not be carried out at another.
  type_required: [400, { message: "type is required" }],
  type_mismatch: [400, { message: "type must name the call of this path" }],
  license_key_invalid: [400, { message: "license_key must be a license key of the form XXXX-XXXX-XXXX-XXXX (A-Z, 0-9)" }],
  account_email_required: [400, { message: "account_email is required" }],
  account_email_invalid: [400, { message: "account_email must be a valid e-mail address of at most 254 characters" }],
  new_email_required: [400, { message: "new_email is required" }],
  new_email_invalid: [400, { message: "new_email must be a valid e-mail address of at most 254 characters" }],
  unknown_account: [404, { message: "unknown_account" }],
  email_taken: [409, { message: "email_taken" }],
  license_not_active: [409, { message: "license_not_active" }],
} as const satisfies Record<string, readonly [number, { message: string } | { error: string }]>;

export type FailureCode = keyof typeof failures;

/**
 * Retry-After (seconds) of `service_unavailable`: a restart or failover takes seconds, and a
 * fleet that comes back all at once is what the database least needs right then.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** A failure with a stable code, thrown by use cases and mapped to HTTP in one place. */
export class Failure extends Error {
  override name = "Failure";
  constructor(
    readonly code: FailureCode,
    /** Extra response headers, e.g. Retry-After on a 429. */
    readonly headers: Record<string, string> = {},
  ) {
    super(code);
  }
}

const bodies = Object.fromEntries(
  Object.entries(failures).map(([code, [, body]]) => [code, JSON.stringify(body)]),
) as Record<FailureCode, string>;

/** The HTTP answer for a failure code. */
export function failureResponse(code: FailureCode, headers: Record<string, string> = {}): Response {
  return new Response(bodies[code], {
    status: failures[code][0],
    headers: { "content-type": "application/json", ...headers },
  });
}
