import { Webhook, WebhookVerificationError } from "standardwebhooks";

/** webhook-timestamp: whole Unix seconds. */
const TIMESTAMP = /^[0-9]{1,11}$/;

/** How far a webhook-timestamp may be from the clock, either way (the scheme's 5 minutes). */
export const MAX_SKEW_SECONDS = 300;

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
 * caller that receives or signs a Standard Webhook (Supabase Auth's hooks, signed onboardings).
 * `webhook-signature` holds space-separated `v1,<base64>` entries (several while the platform
 * rotates its secret: one matching entry is enough), each the HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<body>` under the base64-decoded `whsec_` secret, compared in
 * constant time by the package. The secret may come as Supabase shows it, `v1,whsec_<base64>`: the
 * `v1,` goes, as Supabase's own examples do. The package reads the clock with `Date.now()`;
 * Cadence has one injected clock (so tests and faketime see one time), so its timestamp check is
 * replaced on this instance by the same one on `nowMs`: whole Unix seconds, within 300 s either way.
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
    if (!TIMESTAMP.test(header) || Math.abs(Math.floor(clockMs / 1000) - Number(header)) > MAX_SKEW_SECONDS) {
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
