import { z } from "@hono/zod-openapi";
import { Email } from "../email.ts";
import { LicenseKey } from "../license-key.ts";

/** The contract: a system name is 1 to 40 characters. */
export const SYSTEM_NAME_MAX_LENGTH = 40;

/**
 * Characters that render as nothing, which the form removes (migration system_names_without_blanks):
 * format characters (Cf: zero-width, bidi controls, BOM, tags), default-ignorable code points (the
 * Hangul fillers U+115F U+1160 U+3164 U+FFA0, variation selectors, U+034F...) and the blank symbols
 * U+2800 BRAILLE PATTERN BLANK and U+1D159 MUSICAL SYMBOL NULL NOTEHEAD. Deno's Cf and
 * Default_Ignorable_Code_Point are the same sets as Node's Unicode 17, from which the SQL's table is generated.
 */
const RENDERS_NOTHING = String.raw`\p{Cf}\p{Default_Ignorable_Code_Point}\u2800\u{1D159}`;
const INVISIBLE = new RegExp(`[${RENDERS_NOTHING}]`, "gu");

/**
 * The form a system name is stored and compared in, as `cadence.system_name_form` computes it in
 * SQL: characters that render as nothing removed, NFC, trimmed. So `Lobby`, `Lobby` + U+3164 and
 * U+2800 + `Lobby` are one name, and a name of only such characters is empty.
 *
 * @example
 * systemNameForm(" lobby\u200b "); // "lobby"
 * systemNameForm("\u115fLobby\u3164"); // "Lobby"
 */
export function systemNameForm(name: string): string {
  return name.replace(INVISIBLE, "").normalize("NFC").trim();
}

/**
 * Code points no system name holds: controls (Cc, NUL included), private use (Co), unassigned and
 * noncharacters (Cn), surrogates (Cs), U+FFFD, what an unpaired surrogate becomes on the way in
 * (`parseJsonBody` makes JSON text well-formed), U+FFFC OBJECT REPLACEMENT CHARACTER, which stands
 * for an object the text does not hold (a box in some fonts, nothing in others), and the line and
 * paragraph separators U+2028 and U+2029 (Zl, Zp), which break a kiosk's one-line label. At either
 * end, trim removes those two as it removes a newline.
 */
const REFUSED = /[\p{Cc}\p{Co}\p{Cn}\p{Cs}\uFFFC\uFFFD\u2028\u2029]/u;
/** What shows: a letter, digit, punctuation or symbol that does not render as nothing (the Hangul fillers are letters). */
const SHOWS = new RegExp(`(?![${RENDERS_NOTHING}])[\\p{L}\\p{N}\\p{P}\\p{S}]`, "u");

/**
 * Whether a name (in its stored form) shows something, as `cadence.system_name_shows` decides in
 * SQL: no refused code point, and at least one character that shows. A lone combining mark, a
 * Hangul filler, a blank symbol or a variation selector shows nothing.
 *
 * @example
 * systemNameShows("\u3164"); // false
 * systemNameShows("Lobby \u{1F3B5}"); // true
 */
export function systemNameShows(name: string): boolean {
  return !REFUSED.test(name) && SHOWS.test(name);
}

/**
 * A kiosk's system name, as both routes accept it: a string, in its stored form (`systemNameForm`),
 * then 1 to 40 characters counted as code points (as Postgres's char_length counts them for the
 * stored name's check), showing something (`systemNameShows`): empty, whitespace-only, or blank
 * once rendered is invalid alike. The length is counted on the form, after blank characters are
 * removed, as it was when the form removed only format characters: the spec's "1 to 40 characters,
 * trimmed" are those of the name as stored, so 40 letters and a variation selector are a name of 40.
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
