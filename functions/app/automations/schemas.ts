import { z } from "@hono/zod-openapi";
import { Email, normalizeEmail } from "../email.ts";
import { Failure, type FailureCode } from "../errors.ts";
import { LicenseKey } from "../license-key.ts";

/** The name a lifecycle body carries in `type`: its call's, as `npm run sign` names it. */
export const CALL_TYPES = ["suspend", "reinstate", "move", "change-email", "resend"] as const;
export type CallType = (typeof CALL_TYPES)[number];

/**
 * A body's `type`, which must name the call of its path. Standard Webhooks signs the body, not
 * the path, and suspend, reinstate and resend all take `{license_key}`: without it, a request
 * intercepted on its way to one call could be carried out at another before the original arrived.
 */
const typeOf = <T extends CallType>(type: T) =>
  z.literal(type).openapi({ description: `\`${type}\`: the call this body is for. A body signed for another call is refused (400), whatever its signature` });

/** A body naming one license key (suspend, reinstate, resend), registered in the document as `name`. */
export const keyRequest = <T extends CallType>(type: T, name: string) =>
  z
    .object({ type: typeOf(type), license_key: LicenseKey.openapi({ description: "The license key, as issued: four blocks of four of A-Z and 0-9" }) })
    .openapi(name);
export type KeyRequest = Omit<z.infer<ReturnType<typeof keyRequest>>, "type">;

/**
 * A body moving a key to the existing account of an e-mail. No lifecycle body has onboarding's
 * `email` field, so onboarding's signed bytes are bad input at every call, and theirs at
 * onboarding.
 */
export const MoveRequest = z
  .object({
    type: typeOf("move"),
    license_key: LicenseKey,
    account_email: Email.openapi({ description: "The e-mail of the account the key moves to (trimmed, compared regardless of case). The account must exist: onboarding creates accounts, a move never does" }),
  })
  .openapi("MoveKeyRequest");
export type MoveRequest = Omit<z.infer<typeof MoveRequest>, "type">;

/** A body changing an account's e-mail. */
export const ChangeEmailRequest = z
  .object({
    type: typeOf("change-email"),
    account_email: Email.openapi({ description: "The account's e-mail now (trimmed, compared regardless of case)" }),
    new_email: Email.openapi({ description: "Its new e-mail, stored trimmed and lower-cased; no other account may have it", example: "new@example.com" }),
  })
  .openapi("ChangeEmailRequest");
export type ChangeEmailRequest = Omit<z.infer<typeof ChangeEmailRequest>, "type">;

/** The 200 of every lifecycle call; a retry of an id gets the first one again, byte for byte. */
export const LifecycleResponse = z
  .object({
    success: z.boolean(),
    message: z.string(),
    changed: z.boolean().openapi({ description: "false when the call found it done already (a key already suspended, already in that account, an e-mail unchanged)" }),
    user_id: z.string().optional().openapi({ description: "The account the key now belongs to (move), or whose e-mail changed (change-email)" }),
  })
  .openapi("LifecycleResponse");
export type LifecycleResponse = z.infer<typeof LifecycleResponse>;

/** The fields of a parsed body, or none: any JSON that is not an object has no fields to find. */
function fieldsOf(body: unknown): Record<string, unknown> {
  return typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

/** A required license key: missing or blank, then malformed. The key is taken as sent (a kiosk types it so). */
function licenseKeyOf(fields: Record<string, unknown>): string {
  const value = fields.license_key;
  if (typeof value !== "string" || value.trim() === "") throw new Failure("license_key_required");
  const key = LicenseKey.safeParse(value.trim());
  if (!key.success) throw new Failure("license_key_invalid");
  return key.data;
}

/** A required e-mail field, normalized (trimmed, lower-cased): missing or blank, then invalid. */
function emailOf(value: unknown, required: FailureCode, invalid: FailureCode): string {
  if (typeof value !== "string" || value.trim() === "") throw new Failure(required);
  const email = Email.safeParse(normalizeEmail(value));
  if (!email.success) throw new Failure(invalid);
  return email.data;
}

/**
 * Checks that a parsed body names `type`'s call, before any other field: `type is required`
 * (missing or not a string), then `type must name the call of this path`.
 */
export function requireCallType(body: unknown, type: CallType): void {
  const value = fieldsOf(body).type;
  if (typeof value !== "string") throw new Failure("type_required");
  if (value !== type) throw new Failure("type_mismatch");
}

/**
 * Validates a parsed body naming a key, with onboarding's kind of messages: `license_key is required`
 * (missing, not a string, or blank), then its form. Fields other than those named are ignored.
 */
export function parseKeyRequest(body: unknown): KeyRequest {
  return { license_key: licenseKeyOf(fieldsOf(body)) };
}

/** Validates a move: the key as `parseKeyRequest`, then the target account's e-mail as onboarding's. */
export function parseMoveRequest(body: unknown): MoveRequest {
  const fields = fieldsOf(body);
  return { license_key: licenseKeyOf(fields), account_email: emailOf(fields.account_email, "account_email_required", "account_email_invalid") };
}

/** Validates an e-mail change: the account's e-mail now, then the new one. */
export function parseChangeEmailRequest(body: unknown): ChangeEmailRequest {
  const fields = fieldsOf(body);
  return {
    account_email: emailOf(fields.account_email, "account_email_required", "account_email_invalid"),
    new_email: emailOf(fields.new_email, "new_email_required", "new_email_invalid"),
  };
}
