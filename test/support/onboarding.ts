import { signOnboardingRequest, signStandardWebhookRequest } from "../../functions/app/signatures/signed-request.ts";
import { ONBOARDING_PATH } from "../../functions/app/signatures/spec-signature.ts";

export { ONBOARDING_PATH };

/** The signing secret the onboarding tests configure the app with. */
export const SECRET = "test-signing-secret-0123456789";

/** The Standard Webhooks secret the onboarding tests configure the app with: `whsec_` and 24 bytes in base64. */
export const WEBHOOK_SECRET = "whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIzNDU2";

/**
 * A POST init for the onboarding webhook, signed with Cadence's own signing helper.
 *
 * @example
 * await request(ONBOARDING_PATH, await signedInit({ email: "ada@example.com" }, { nowMs: clock.now() }));
 */
export async function signedInit(
  body: unknown,
  options: { nowMs: number; nonce?: string; secret?: string; ip?: string; idempotencyKey?: string; path?: string },
): Promise<RequestInit> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const signed = await signOnboardingRequest(options.secret ?? SECRET, text, options);
  const headers: Record<string, string> = { ...signed.headers };
  if (options.ip) headers["x-forwarded-for"] = options.ip;
  return { method: "POST", headers, body: signed.body };
}

/**
 * A whole license key anywhere in a text, standing alone: not four digits inside a UUID such as
 * `ff323e03-0658-4636-9601-42371f6f979e`.
 */
export const FULL_KEY_IN_TEXT = /(?<![\w-])[A-Z0-9]{4}(?:-[A-Z0-9]{4}){3}(?![\w-])/;

/**
 * A POST init for the onboarding webhook signed with Standard Webhooks, by the `standardwebhooks`
 * package itself (through Cadence's signing helper).
 *
 * @example
 * await request(ONBOARDING_PATH, standardInit({ email: "ada@example.com" }, { nowMs: clock.now(), id: "msg_1" }));
 */
export function standardInit(
  body: unknown,
  options: { nowMs: number; id?: string; secret?: string; ip?: string },
): RequestInit {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const signed = signStandardWebhookRequest(options.secret ?? WEBHOOK_SECRET, text, options);
  const headers: Record<string, string> = { ...signed.headers };
  if (options.ip) headers["x-forwarded-for"] = options.ip;
  return { method: "POST", headers, body: signed.body };
}
