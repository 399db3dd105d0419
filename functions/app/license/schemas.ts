import { z } from "@hono/zod-openapi";
import { Email } from "../email.ts";
import { LicenseKey } from "../license-key.ts";

/** The contract: a system name is 1 to 40 characters. */
export const SYSTEM_NAME_MAX_LENGTH = 40;

/** Characters that render as nothing: Unicode's format characters (zero-width, bidi controls, BOM, tags). */
const INVISIBLE = /\p{Cf}/gu;

/**
 * The form a system name is stored and compared in, as `cadence.system_name_form` computes it in
 * SQL (migration invisible_system_names): format characters removed, NFC, trimmed. So `lobby` and
 * `lobby` with a zero-width space are one name, and a name of only such characters is empty.
 *
 * @example
 * systemNameForm(" lobby\u200b "); // "lobby"
 */
export function systemNameForm(name: string): string {
  return name.replace(INVISIBLE, "").normalize("NFC").trim();
}

/**
 * Code points no system name holds: controls (Cc, NUL included), private use (Co), unassigned and
 * noncharacters (Cn), surrogates (Cs), and U+FFFD, what an unpaired surrogate becomes on the way in
 * (`parseJsonBody` makes JSON text well-formed).
 */
const REFUSED = /[\p{Cc}\p{Co}\p{Cn}\p{Cs}\uFFFD]/u;
/** What shows: a letter, digit, punctuation or symbol... */
const SHOWS = /[\p{L}\p{N}\p{P}\p{S}]/u;
/** ...unless it renders as nothing: default-ignorables (the Hangul fillers are letters) and the braille blank. */
const SHOWS_NOTHING = /[\p{Default_Ignorable_Code_Point}\u2800]/u;

/**
 * Whether a name (in its stored form) shows something, as `cadence.system_name_shows` decides in
 * SQL: no refused code point, and at least one character that shows. A lone combining mark, a
 * Hangul filler, the braille blank or a variation selector shows nothing.
 *
 * @example
 * systemNameShows("\u3164"); // false
 * systemNameShows("Lobby \u{1F3B5}"); // true
 */
export function systemNameShows(name: string): boolean {
  if (REFUSED.test(name)) return false;
  for (const character of name) if (SHOWS.test(character) && !SHOWS_NOTHING.test(character)) return true;
  return false;
}

/**
 * A kiosk's system name, as both routes accept it: a string, in its stored form (`systemNameForm`),
 * then 1 to 40 characters counted as code points (as Postgres's char_length counts them for the
 * stored name's check), showing something (`systemNameShows`): empty, whitespace-only, or blank
 * once rendered is invalid alike.
 */
export const SystemName = z
  .string()
  .transform(systemNameForm)
  .refine((name) => {
    const length = [...name].length;
    return length >= 1 && length <= SYSTEM_NAME_MAX_LENGTH && systemNameShows(name);
  })
  .openapi({ type: "string", minLength: 1, maxLength: SYSTEM_NAME_MAX_LENGTH, example: "Front desk" });

/** What the optional systemName of a license validation did; validation succeeds in all four cases. */
export const SystemNameStatus = z.enum(["ok", "unchanged", "conflict", "invalid"]);
export type SystemNameStatus = z.infer<typeof SystemNameStatus>;

export const LicenseRequest = z
  .object({
    license_key: LicenseKey,
    email_address: Email,
    systemName: SystemName.optional().openapi({
      description: "Omitted: the stored name is untouched. Empty or whitespace-only is invalid and never clears it.",
    }),
  })
  .openapi("LicenseRequest");

export const LicenseResponse = z
  .object({
    key: LicenseKey,
    email_address: Email.openapi({ description: "The owner's e-mail" }),
    systemNameStatus: SystemNameStatus.openapi({ description: "`unchanged` when systemName was omitted" }),
  })
  .openapi("LicenseResponse");
export type LicenseResponse = z.infer<typeof LicenseResponse>;

export const SystemNameRequest = z.object({ systemName: SystemName }).openapi("SystemNameRequest");

export const SystemNameResponse = z
  .object({
    systemName: z.string().openapi({ description: "The stored name" }),
    systemNameStatus: z.literal("ok"),
  })
  .openapi("SystemNameResponse");
export type SystemNameResponse = z.infer<typeof SystemNameResponse>;

export const LicenseKeyParam = z.object({ licenseKey: LicenseKey });
