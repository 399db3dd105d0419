import { Webhook, WebhookVerificationError } from "standardwebhooks";

/**
 * The library's Webhook for a secret as Supabase shows it, `v1,whsec_<base64>`: the `v1,` prefix
 * goes, as Supabase's own examples do; the library strips `whsec_` and decodes the rest.
 */
function webhookFor(secret: string): Webhook {
  return new Webhook(secret.replace(/^v1,/, ""));
}

/** The outcome of checking one hook call: valid, or why not (the library's words, never the secret). */
export type HookVerdict = { valid: true } | { valid: false; reason: string };

/** Checks the Standard Webhooks headers of one call against the exact body text that came. */
export type HookVerifier = (body: string, headers: Headers) => HookVerdict;

/**
 * A verifier for Supabase Auth's hook calls: `webhook-id`, `webhook-timestamp` (at most 5 minutes
 * from the clock, either way) and `webhook-signature` (HMAC-SHA256 of `id.timestamp.body`, compared
 * in constant time) checked by the `standardwebhooks` reference library.
 *
 * @example
 * const verify = hookVerifier(config.SEND_EMAIL_HOOK_SECRET);
 * if (!verify(body, request.headers).valid) return new Response(null, { status: 401 });
 */
export function hookVerifier(secret: string): HookVerifier {
  const webhook = webhookFor(secret);
  return function verifyHook(body, headers) {
    const signed = {
      "webhook-id": headers.get("webhook-id") ?? "",
      "webhook-timestamp": headers.get("webhook-timestamp") ?? "",
      "webhook-signature": headers.get("webhook-signature") ?? "",
    };
    try {
      webhook.verify(body, signed, { jsonParse: false });
      return { valid: true };
    } catch (error) {
      if (error instanceof WebhookVerificationError) return { valid: false, reason: error.message };
      throw error;
    }
  };
}

/**
 * The headers Supabase Auth sends with a hook call, signed with `secret`: for tests and for
 * trying the hook by hand.
 *
 * @example
 * const headers = signHookRequest(secret, JSON.stringify(payload));
 * await fetch(hookUrl, { method: "POST", headers, body: JSON.stringify(payload) });
 */
export function signHookRequest(
  secret: string,
  body: string,
  options: { id?: string; nowMs?: number } = {},
): Record<string, string> {
  const id = options.id ?? `msg_${crypto.randomUUID()}`;
  const at = new Date(options.nowMs ?? Date.now());
  return {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": webhookFor(secret).sign(id, at, body),
  };
}
