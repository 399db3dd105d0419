import { standardWebhook } from "../standard-webhooks.ts";

/** webhook-id: printable ASCII without spaces, at most 255 characters (Svix's `msg_...` fits); bounded for storage. */
export const WEBHOOK_ID = /^[\x21-\x7e]{1,255}$/;

/** The three Standard Webhooks headers; a request carrying any of them is checked under that scheme. */
export const STANDARD_WEBHOOK_HEADERS = ["webhook-id", "webhook-timestamp", "webhook-signature"] as const;

/**
 * A Standard Webhooks secret as platforms show it: `whsec_` and the base64 of 24 to 64 random
 * bytes (the Standard Webhooks specification's bounds).
 */
export const WEBHOOK_SECRET = /^whsec_(?:[A-Za-z0-9+/]{4}){8,22}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Checks one request's Standard Webhooks headers; resolves to its `webhook-id` when they hold, else undefined. */
export type StandardWebhookVerifier = (headers: Headers, body: Uint8Array, nowMs: number) => string | undefined;

/**
 * A verifier for signed onboardings under the Standard Webhooks scheme (standardwebhooks.com),
 * checked by the one wrapper of the reference package (../standard-webhooks.ts) on the injected
 * clock: a `webhook-id` of printable ASCII is required too, as it keys the idempotency record.
 * Without a secret nothing verifies.
 *
 * @example
 * const verify = standardWebhookVerifier(config.STANDARD_WEBHOOKS_SECRET);
 * const webhookId = verify(request.headers, body, Date.now());
 */
export function standardWebhookVerifier(secret: string | undefined): StandardWebhookVerifier {
  if (!secret) return () => undefined;
  const webhook = standardWebhook(secret);
  const utf8 = new TextDecoder();
  return function verifyStandardWebhook(headers, body, nowMs) {
    if (!WEBHOOK_ID.test(headers.get("webhook-id") ?? "")) return undefined;
    const verdict = webhook.verify(utf8.decode(body), headers, nowMs);
    return verdict.valid ? verdict.id : undefined;
  };
}

/**
 * The Standard Webhooks headers for `body`, signed as a platform signs them: for tests and
 * `npm run sign`.
 *
 * @example
 * const headers = signStandardWebhook(secret, body, { id: "msg_1" });
 */
export function signStandardWebhook(
  secret: string,
  body: string,
  options: { id?: string; nowMs?: number } = {},
): Record<string, string> {
  return standardWebhook(secret).sign(body, options);
}
