import { z } from "@hono/zod-openapi";

/** The contract: e-mail addresses are at most 254 characters. */
export const EMAIL_MAX_LENGTH = 254;

/** Control characters (Unicode Cc) and format characters (Cf: bidi controls, zero-width characters). */
const CONTROL_OR_FORMAT = /[\p{Cc}\p{Cf}]/u;

/**
 * An e-mail address as the contract accepts it: at most 254 characters, of the form text@text.text,
 * with no whitespace, control character (U+0000 to U+001F, U+007F to U+009F: a BEL, a NUL) or
 * format character (Unicode Cf: U+202E and the other bidi controls, zero-width characters), which
 * no mailbox needs and which make one address look like another (the same rule as the accounts
 * table's check constraints).
 */
export const Email = z
  .string()
  .max(EMAIL_MAX_LENGTH)
  .regex(/^[^@\s\u0000]+@[^@\s\u0000]+\.[^@\s\u0000]+$/)
  // Apart from the pattern, which the OpenAPI document publishes and zod writes without its flags.
  .refine((email) => !CONTROL_OR_FORMAT.test(email))
  .openapi({ format: "email", example: "demo@example.com" });

/** The form e-mails are compared and stored in: trimmed and lower-cased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
