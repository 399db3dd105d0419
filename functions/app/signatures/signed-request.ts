import { signRequest } from "./spec-signature.ts";
import { standardWebhook } from "./standard-webhooks.ts";

export interface SignedRequest {
  headers: Record<string, string>;
  /** The exact body that was signed: send these bytes unchanged. */
  body: string;
}

/**
 * Signs an onboarding request the way integrators must: for tests, the signing command and
 * anyone embedding Cadence's own code. With `idempotencyKey`, the request is carried out once for
 * that key: a retry re-signs the same body with the same key (and a new nonce). With `path`, a
 * signed lifecycle call (`/api/v2/automations/suspend/key` ...): the path is part of what is signed.
 *
 * @example
 * const signed = await signOnboardingRequest(secret, JSON.stringify({ email: "ada@example.com" }), { idempotencyKey: crypto.randomUUID() });
 * await fetch(`${baseUrl}/api/v2/automations/create/account`, { method: "POST", ...signed });
 */
export async function signOnboardingRequest(
  secret: string,
  body: string,
  options: { nowMs?: number; nonce?: string; idempotencyKey?: string; path?: string } = {},
): Promise<SignedRequest> {
  const timestamp = String(Math.floor((options.nowMs ?? Date.now()) / 1000));
  const nonce = options.nonce ?? crypto.randomUUID();
  const signature = await signRequest(secret, timestamp, nonce, new TextEncoder().encode(body), options.path);
  return {
    headers: {
      "content-type": "application/json",
      "x-timestamp": timestamp,
      "x-nonce": nonce,
      "x-signature": signature,
      ...(options.idempotencyKey === undefined ? {} : { "idempotency-key": options.idempotencyKey }),
    },
    body,
  };
}

/**
 * Signs an onboarding request with Standard Webhooks (`whsec_` secret), as a platform such as Svix
 * does: `webhook-id` is the id a retry repeats; the same request sent again within 300 s gets the
 * first answer.
 *
 * @example
 * const signed = signStandardWebhookRequest("whsec_...", JSON.stringify({ email: "ada@example.com" }), { id: "msg_1" });
 */
export function signStandardWebhookRequest(
  secret: string,
  body: string,
  options: { nowMs?: number; id?: string } = {},
): SignedRequest {
  return { headers: { "content-type": "application/json", ...standardWebhook(secret).sign(body, options) }, body };
}
