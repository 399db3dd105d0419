import { Failure } from "../errors.ts";
import type { IdempotencyId } from "./store.ts";
import type { VerifiedRequest } from "./verify-request.ts";

/** Idempotency-Key: printable ASCII without spaces, at most 255 characters (Stripe's bound); a UUID is ideal. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** An id is carried out once for this long; a retry after it is a new request. */
export const IDEMPOTENCY_RETENTION_HOURS = 24;

/**
 * How long a claim on an id holds before another request may take it over: far beyond the longest
 * a request can run (the limiter's 0.5 s and five statements of at most DATABASE_DEADLINE_MS), so
 * a live request is never taken over; short enough that after a crash a retry waits a minute at most.
 */
export const CLAIM_LEASE_SECONDS = 60;

/**
 * The id a request is carried out once under, if any: under Standard Webhooks its signed
 * `webhook-id` (an `Idempotency-Key` beside it is not used: the signed id wins); under the contract's
 * scheme the `Idempotency-Key` header, unsigned but worth nothing without a signed request (and a
 * body that must match). A malformed Idempotency-Key is a 400, never silently ignored.
 *
 * @example
 * const id = idempotencyIdOf(request.headers, verified); // { source: "idempotency-key", id: "4f1c..." }
 */
export function idempotencyIdOf(headers: Headers, verified: VerifiedRequest): IdempotencyId | undefined {
  if (verified.scheme === "standard-webhooks") return { source: "webhook-id", id: verified.webhookId };
  const key = headers.get("idempotency-key");
  if (key === null) return undefined;
  if (!IDEMPOTENCY_KEY.test(key)) throw new Failure("idempotency_key_invalid");
  return { source: "idempotency-key", id: key };
}
