import { signatureVerifier } from "./spec-signature.ts";
import { STANDARD_WEBHOOK_HEADERS, standardWebhookVerifier } from "./standard-webhooks.ts";

/** The contract's three signed headers (its onboardingSignature scheme). */
export const SPEC_SIGNATURE_HEADERS = ["x-timestamp", "x-nonce", "x-signature"] as const;

/**
 * A request whose signature holds, and under which scheme: the contract's, with its nonce (recorded
 * next: a repeat is a replay, 401), or Standard Webhooks', with its `webhook-id` (a repeat is a
 * retry, answered with the first answer).
 */
export type VerifiedRequest = { scheme: "spec"; nonce: string } | { scheme: "standard-webhooks"; webhookId: string };

/** Checks one request under exactly one scheme; undefined for every failure alike. */
export type RequestVerifier = (headers: Headers, body: Uint8Array, nowMs: number) => Promise<VerifiedRequest | undefined>;

/**
 * Picks the scheme by the headers present and checks the request under it alone: any
 * `webhook-*` header means Standard Webhooks, else the contract's `x-*` headers (missing ones fail as
 * today). A request carrying headers of both is refused, with the same 401 as every other failure:
 * checking it under either would leave the other's headers unchecked, and which one the sender meant
 * is not ours to guess.
 *
 * @example
 * const verify = requestVerifier({ signingSecret, standardWebhooksSecret });
 * const verified = await verify(request.headers, body, Date.now());
 */
export function requestVerifier(
  secrets: {
    signingSecret?: string;
    signingSecretPrevious?: string;
    standardWebhooksSecret?: string;
  },
  /** The path the contract's signature covers: the route's own (onboarding's by default). */
  path?: string,
): RequestVerifier {
  const spec = signatureVerifier(secrets.signingSecret, secrets.signingSecretPrevious, path);
  const standard = standardWebhookVerifier(secrets.standardWebhooksSecret);
  return async function verifyRequest(headers, body, nowMs) {
    const isStandard = STANDARD_WEBHOOK_HEADERS.some((name) => headers.has(name));
    if (isStandard) {
      if (SPEC_SIGNATURE_HEADERS.some((name) => headers.has(name))) return undefined;
      const webhookId = standard(headers, body, nowMs);
      return webhookId === undefined ? undefined : { scheme: "standard-webhooks", webhookId };
    }
    const nonce = await spec(headers, body, nowMs);
    return nonce === undefined ? undefined : { scheme: "spec", nonce };
  };
}
