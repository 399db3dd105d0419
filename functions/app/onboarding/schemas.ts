import { z } from "@hono/zod-openapi";
import { Email, normalizeEmail } from "../email.ts";
import { Failure } from "../errors.ts";

/** The contract: the onboarding display name is at most 120 characters. */
export const NAME_MAX_LENGTH = 120;

/** Postgres text cannot hold NUL, so a name with one is invalid rather than a failed insert. */
const DisplayName = z.string().trim().max(NAME_MAX_LENGTH).regex(/^[^\u0000]*$/);

export const OnboardingRequest = z
  .object({
    email: Email.openapi({ description: "Trimmed and lower-cased; at most 254 characters" }),
    name: DisplayName.optional().openapi({
      description: "Display name, at most 120 characters; defaults to the local part of the e-mail",
      example: "Ada Lovelace",
    }),
  })
  .openapi("OnboardingRequest");

export const OnboardingResponse = z
  .object({ success: z.boolean(), message: z.string(), user_id: z.string() })
  .openapi("OnboardingResponse");
export type OnboardingResponse = z.infer<typeof OnboardingResponse>;

/** The 200's message. */
export const ONBOARDED_MESSAGE = "account ready; the license key is on its way by e-mail";

/**
 * The 200's exact text for an account: one function, so the answer a retry replays (stored by
 * cadence.onboard_once from `onboardingAnswer("{user_id}")`) and the one without an id are the same bytes.
 */
export function onboardingAnswer(userId: string): string {
  return JSON.stringify({ success: true, message: ONBOARDED_MESSAGE, user_id: userId } satisfies OnboardingResponse);
}

export const SignatureError = z.object({ error: z.string() }).openapi("SignatureError", {
  example: { error: "invalid signature" },
});

/** A validated onboarding: the normalized e-mail and the display name to create the account with. */
export const Onboarding = z.object({ email: Email, name: DisplayName.min(1) });
export type Onboarding = z.infer<typeof Onboarding>;

/** The local part of an e-mail, cut to the longest display name allowed. */
export function localPart(email: string): string {
  return Array.from(email.slice(0, email.lastIndexOf("@"))).slice(0, NAME_MAX_LENGTH).join("");
}

/**
 * Validates a parsed body in the contract's order with its exact messages: `email is required` (missing,
 * not a string, or blank), then the e-mail's form and length, then the name. A missing, null or
 * blank name takes the e-mail's local part.
 */
export function parseOnboardingRequest(body: unknown): Onboarding {
  const fields = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  if (typeof fields.email !== "string" || fields.email.trim() === "") throw new Failure("email_required");
  const email = Email.safeParse(normalizeEmail(fields.email));
  if (!email.success) throw new Failure("email_invalid");
  const name = DisplayName.nullish().safeParse(fields.name);
  if (!name.success) throw new Failure("name_invalid");
  return { email: email.data, name: name.data || localPart(email.data) };
}
