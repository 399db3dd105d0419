import { standardWebhook } from "../../functions/app/signatures/standard-webhooks.ts";

/** The hook secret the tests configure, in the dashboard's form `v1,whsec_<base64>`. */
export const HOOK_SECRET = `v1,whsec_${btoa("cadence-test-send-email-hook-secret!")}`;
/** Another valid secret: what a caller without Cadence's secret would sign with. */
export const OTHER_SECRET = `v1,whsec_${btoa("someone-else-entirely-their-secret!!")}`;

/** Auth's external URL, which Auth sends as `email_data.site_url`. */
export const SITE_URL = "https://abcdefghij.supabase.co/auth/v1";

type Fields = Record<string, unknown>;

/**
 * A Send Email Hook payload as Supabase Auth sends it (the documented example's shape), for
 * `action`, with fields replaced as given.
 */
export function hookPayload(action: string, overrides: { user?: Fields; email_data?: Fields } = {}) {
  const id = "8484b834-f29e-4af2-bf42-80644d154f76";
  return {
    user: {
      id,
      aud: "authenticated",
      role: "authenticated",
      email: "ada@example.com",
      phone: "",
      app_metadata: { provider: "email", providers: ["email"] },
      user_metadata: { name: "Ada Lovelace" },
      identities: [],
      created_at: "2026-11-22T12:00:00Z",
      updated_at: "2026-11-22T12:00:00Z",
      is_anonymous: false,
      ...overrides.user,
    },
    email_data: {
      token: "305805",
      token_hash: "pkce_7d5b7b1964cf5d388340a7f04f1dbb5eeb6c7b52ef8270e1737a58d0",
      redirect_to: "https://kiosk.example.com/welcome",
      email_action_type: action,
      site_url: SITE_URL,
      token_new: "",
      token_hash_new: "",
      ...overrides.email_data,
    },
  };
}

/**
 * A POST init signed as Supabase Auth signs hook calls (Standard Webhooks), with the exact body.
 *
 * @example
 * await handle(new Request(HOOK_URL, signedHookInit(hookPayload("magiclink"))));
 */
export function signedHookInit(
  body: unknown,
  options: { secret?: string; nowMs?: number; id?: string } = {},
): RequestInit & { headers: Record<string, string>; body: string } {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const signed = standardWebhook(options.secret ?? HOOK_SECRET).sign(text, options);
  return { method: "POST", headers: { "content-type": "application/json", ...signed }, body: text };
}
