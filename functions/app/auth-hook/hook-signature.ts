import { standardWebhook, type WebhookVerdict } from "../standard-webhooks.ts";

/** Checks the Standard Webhooks headers of one call against the exact body text that came, at `nowMs`. */
export type HookVerifier = (body: string, headers: Headers, nowMs: number) => WebhookVerdict;

/**
 * A verifier for Supabase Auth's hook calls: `webhook-id`, `webhook-timestamp` (at most 5 minutes
 * from the clock, either way) and `webhook-signature` (HMAC-SHA256 of `id.timestamp.body`, compared
 * in constant time), checked by the one Standard Webhooks wrapper (standard-webhooks.ts). The
 * secret comes as Supabase shows it, `v1,whsec_<base64>`.
 *
 * @example
 * const verify = hookVerifier(config.SEND_EMAIL_HOOK_SECRET);
 * if (!verify(body, request.headers, Date.now()).valid) return new Response(null, { status: 401 });
 */
export function hookVerifier(secret: string): HookVerifier {
  const webhook = standardWebhook(secret);
  return function verifyHook(body, headers, nowMs) {
    return webhook.verify(body, headers, nowMs);
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
  return { "content-type": "application/json", ...standardWebhook(secret).sign(body, options) };
}
