import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { withinSkew } from "./timestamp-skew.ts";

/** webhook-id: printable ASCII without spaces, at most 255 characters (Svix's `msg_...` fits); bounded for storage. */
export const WEBHOOK_ID = /^[\x21-\x7e]{1,255}$/;

/** The three Standard Webhooks headers; a request carrying any of them is checked under that scheme. */
export const STANDARD_WEBHOOK_HEADERS = ["webhook-id", "webhook-timestamp", "webhook-signature"] as const;

/** The outcome of checking one call: valid with its `webhook-id`, or why not (the library's words, never the secret). */
export type WebhookVerdict = { valid: true; id: string } | { valid: false; reason: string };

export interface StandardWebhook {
  /** Checks the three headers of one call against the exact body text that came, at `nowMs`. */
  verify(body: string, headers: Headers, nowMs: number): WebhookVerdict;
  /** The three headers for `body`, signed as a platform signs them: for tests and `npm run sign`. */
  sign(body: string, options?: { id?: string; nowMs?: number }): Record<string, string>;
}

/**
 * The one wrapper of the `standardwebhooks` reference package (standardwebhooks.com), for every
 * caller that receives or signs a Standard Webhook (Supabase Auth's Send Email Hook, signed
 * onboardings, the tests and `npm run sign`).
 * `webhook-signature` holds space-separated `v1,<base64>` entries (several while the platform
 * rotates its secret: one matching entry is enough), each the HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<body>` under the base64-decoded `whsec_` secret, compared in
 * constant time by the package. The secret may come as Supabase shows it, `v1,whsec_<base64>`: the
 * `v1,` goes, as Supabase's own examples do. The package reads the clock with `Date.now()`;
 * Cadence has one injected clock (so tests and faketime see one time), so its timestamp check is
 * replaced on this instance by the same one on `nowMs` (`withinSkew`).
 *
 * @example
 * const webhook = standardWebhook(config.STANDARD_WEBHOOKS_SECRET);
 * const verdict = webhook.verify(text, request.headers, deps.now());
 */
export function standardWebhook(secret: string): StandardWebhook {
  const webhook = new Webhook(secret.replace(/^v1,/, ""));
  let clockMs = 0;
  // `verifyTimestamp` is private in the package's types, an ordinary method at run time.
  (webhook as unknown as { verifyTimestamp: (header: string) => Date }).verifyTimestamp = (header) => {
    if (!withinSkew(header, clockMs)) {
      throw new WebhookVerificationError("timestamp outside the allowed skew");
    }
    return new Date(Number(header) * 1000);
  };
  return {
    verify(body, headers, nowMs) {
      const id = headers.get("webhook-id") ?? "";
      const signed = {
        "webhook-id": id,
        "webhook-timestamp": headers.get("webhook-timestamp") ?? "",
        "webhook-signature": headers.get("webhook-signature") ?? "",
      };
      // verify() runs synchronously: nothing else can move `clockMs` before it reads it.
      clockMs = nowMs;
      try {
        webhook.verify(body, signed, { jsonParse: false });
        return { valid: true, id };
      } catch (error) {
        if (error instanceof WebhookVerificationError) return { valid: false, reason: error.message };
        throw error;
      }
    },
    sign(body, options = {}) {
      const id = options.id ?? `msg_${crypto.randomUUID()}`;
      const at = new Date(Math.floor((options.nowMs ?? Date.now()) / 1000) * 1000);
      return {
        "webhook-id": id,
        "webhook-timestamp": String(at.getTime() / 1000),
        "webhook-signature": webhook.sign(id, at, body),
      };
    },
  };
}

/**
 * The three headers of an outgoing message signed with every secret given (Standard Webhooks allows
 * several `v1,` signatures, space-separated: during a rotation both the old and the new secret sign,
 * and a receiver holding either verifies). `id` is the message's own, stable across its retries.
 *
 * @example
 * const headers = signWithSecrets([secret, previous], body, { id: batchId, nowMs: deps.now() });
 */
export function signWithSecrets(secrets: readonly string[], body: string, options: { id: string; nowMs: number }): Record<string, string> {
  const signed = secrets.map((secret) => standardWebhook(secret).sign(body, options));
  return { ...signed[0], "webhook-signature": signed.map((headers) => headers["webhook-signature"]).join(" ") };
}

/** Checks one request's Standard Webhooks headers; resolves to its `webhook-id` when they hold, else undefined. */
export type StandardWebhookVerifier = (headers: Headers, body: Uint8Array, nowMs: number) => string | undefined;

/**
 * A verifier for signed onboardings under this scheme, on the injected clock: a `webhook-id` of
 * printable ASCII is required too, as it keys the idempotency record. Without a secret nothing
 * verifies.
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
