import { z } from "@hono/zod-openapi";

/** Spec section 8: e-mail addresses are at most 254 characters. */
export const EMAIL_MAX_LENGTH = 254;

/**
 * An e-mail address as the spec accepts it: at most 254 characters, of the form text@text.text
 * (the same rule as the accounts table's check constraint).
 */
export const Email = z
  .string()
  .max(EMAIL_MAX_LENGTH)
  .regex(/^[^@\s\u0000]+@[^@\s\u0000]+\.[^@\s\u0000]+$/)
  .openapi({ format: "email", example: "demo@example.com" });

/** The form e-mails are compared and stored in: trimmed and lower-cased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
