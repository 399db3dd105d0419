import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { MAX_SKEW_SECONDS, TIMESTAMP } from "./signature.ts";

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
 * A verifier for the Standard Webhooks scheme (standardwebhooks.com), checked by the `standardwebhooks`
 * reference package itself: `webhook-signature` holds space-separated `v1,<base64>` entries (several
 * while the platform rotates its secret: one matching entry is enough), each the HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<body>` under the base64-decoded `whsec_` secret, compared in
 * constant time. The package reads the clock with `Date.now()`; Cadence has one injected clock (so
 * tests and faketime see one time), so its timestamp check is replaced on this instance by the same
 * one on `nowMs`: whole Unix seconds, within 300 s either way, as the spec's scheme. Without a
 * secret nothing verifies.
 *
 * @example
 * const verify = standardWebhookVerifier(config.STANDARD_WEBHOOKS_SECRET);
 * const webhookId = verify(request.headers, body, Date.now());
 */
export function standardWebhookVerifier(secret: string | undefined): StandardWebhookVerifier {
  if (!secret) return () => undefined;
  const webhook = new Webhook(secret);
  let nowMs = 0;
  // `verifyTimestamp` is private in the package's types, an ordinary method at run time.
  (webhook as unknown as { verifyTimestamp: (header: string) => Date }).verifyTimestamp = (header) => {
    if (!TIMESTAMP.test(header) || Math.abs(Math.floor(nowMs / 1000) - Number(header)) > MAX_SKEW_SECONDS) {
      throw new WebhookVerificationError("timestamp outside the allowed skew");
    }
    return new Date(Number(header) * 1000);
  };
  const utf8 = new TextDecoder();
  return function verifyStandardWebhook(headers, body, now) {
    const id = headers.get("webhook-id") ?? "";
    if (!WEBHOOK_ID.test(id)) return undefined;
    const signed = {
      "webhook-id": id,
      "webhook-timestamp": headers.get("webhook-timestamp") ?? "",
      "webhook-signature": headers.get("webhook-signature") ?? "",
    };
    // verify() runs synchronously: nothing else can move `nowMs` before it reads it.
    nowMs = now;
    try {
      webhook.verify(utf8.decode(body), signed, { jsonParse: false });
      return id;
    } catch (error) {
      if (error instanceof WebhookVerificationError) return undefined;
      throw error;
    }
  };
}

/**
 * The Standard Webhooks headers for `body`, signed by the `standardwebhooks` package as a platform
 * signs them: for tests and `npm run sign`.
 *
 * @example
 * const headers = signStandardWebhook(secret, body, { id: "msg_1" });
 */
export function signStandardWebhook(
  secret: string,
  body: string,
  options: { id?: string; nowMs?: number } = {},
): Record<string, string> {
  const id = options.id ?? `msg_${crypto.randomUUID()}`;
  const at = new Date(Math.floor((options.nowMs ?? Date.now()) / 1000) * 1000);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(at.getTime() / 1000),
    "webhook-signature": new Webhook(secret).sign(id, at, body),
  };
}
