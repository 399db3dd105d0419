import { z } from "@hono/zod-openapi";
import { Failure } from "../errors.ts";
import { STORE_TIMEOUT_MS } from "../rate-limit/create-limiter.ts";
import type { IdempotencyId } from "./store.ts";
import type { VerifiedRequest } from "../signatures/verify-request.ts";

/** Idempotency-Key: printable ASCII without spaces, at most 255 characters (Stripe's bound); a UUID is ideal. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** An id is carried out once for this long; a retry after it is a new request. */
export const IDEMPOTENCY_RETENTION_HOURS = 24;

/** Marks an answer replayed from an id's first request (Stripe's name for it). */
export const REPLAYED_HEADER = "Idempotent-Replayed";

/** The Idempotency-Key request header of every signed call (onboarding, the lifecycle calls), as the OpenAPI document describes it. */
export const IdempotencyKeyHeader = z.string().regex(IDEMPOTENCY_KEY).optional().openapi({
  description: [
    `With the x-signature scheme (onboardingSignature): carry this request out once for ${IDEMPOTENCY_RETENTION_HOURS} hours.`,
    "A retry with the same key and the same body (re-signed, with a new x-nonce) gets the first answer again, byte for byte, and creates, changes, sends and counts nothing;",
    "the same key with another body, or at another signed call (one namespace for all of them), is 422; while the first is still running, 409 with Retry-After.",
    "Under Standard Webhooks the signed webhook-id plays this part and this header is not used. A UUID is ideal.",
  ].join(" "),
  example: "5c0ae3c8-2d0f-4a57-9d6b-8a7b0f4a2e11",
});

/**
 * How long a claim on an id holds, in whole seconds: the longest the request holding it can take
 * to store its answer or give the id up, its deadline from the claim on: the per-e-mail limit's
 * check (STORE_TIMEOUT_MS) and two statements of at most `databaseDeadlineMs` (the transaction that
 * carries it out, and the release when that fails); 5 s with the default 2 s. A retry arriving
 * meanwhile is told to wait what is left of it (409, Retry-After), and past it takes the id over: a
 * request still running then cannot complete, as cadence.onboard_once locks the id and checks the
 * claim's token first, so two requests with one id never both take effect.
 *
 * @example
 * claimLeaseSeconds(2_000); // 5
 */
export function claimLeaseSeconds(databaseDeadlineMs: number): number {
  return Math.ceil((STORE_TIMEOUT_MS + 2 * databaseDeadlineMs) / 1000);
}

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
