import { authEmail, type AuthEmailKind } from "../mail/auth-email.ts";
import type { EmailMessage } from "../mail/mailer.ts";
import { NAME_MAX_LENGTH } from "../onboarding/schemas.ts";
import { type ActionType, PayloadError, type SendEmailPayload } from "./payload.ts";

type EmailData = SendEmailPayload["email_data"];

/** The kinds whose e-mail carries Auth's verify link, built from `token_hash`. */
const LINKED: Partial<Record<ActionType, AuthEmailKind>> = {
  signup: "signup",
  invite: "invite",
  magiclink: "magiclink",
  recovery: "recovery",
};

/**
 * Auth's verify endpoint for a token hash, as Supabase's own templates build it: `site_url` in
 * the payload is Auth's external URL (`https://<ref>.supabase.co/auth/v1`), so the link is
 * `<site_url>/verify?token=<hash>&type=<type>&redirect_to=<redirect_to>`.
 */
function verifyLink(data: EmailData, tokenHash: string, type: string): string {
  if (!tokenHash) throw new PayloadError(`email_data.token_hash: is required for ${data.email_action_type}`);
  const url = new URL(`${data.site_url.replace(/\/+$/, "")}/verify`);
  url.searchParams.set("token", tokenHash);
  url.searchParams.set("type", type);
  if (data.redirect_to) url.searchParams.set("redirect_to", data.redirect_to);
  return url.href;
}

/** The display name Cadence gave the Auth user (`user_metadata.name`), when there is one. */
function displayName(user: SendEmailPayload["user"]): string | undefined {
  const name = user.user_metadata?.name;
  return typeof name === "string" && name.trim() !== "" ? name.trim().slice(0, NAME_MAX_LENGTH) : undefined;
}

/**
 * The e-mails one hook call asks for, rendered with Cadence's templates. An e-mail change under
 * Secure Email Change (both `token_hash` and `token_hash_new` present) sends two: to the current
 * address `token` with `token_hash_new`, to the new one `token_new` with `token_hash`; that
 * crossing is Auth's, kept for compatibility. Otherwise one e-mail goes to the new address with
 * `token_hash` and whichever code is present.
 *
 * @example
 * const messages = hookEmails(parseSendEmailPayload(body)); // throws PayloadError
 */
export function hookEmails({ user, email_data: data }: SendEmailPayload): EmailMessage[] {
  const name = displayName(user);
  const action = data.email_action_type;
  const code = data.token || undefined;
  const codeNew = data.token_new || undefined;

  const linked = LINKED[action];
  if (linked) {
    return [authEmail({ kind: linked, to: user.email, name, link: verifyLink(data, data.token_hash, action), code })];
  }

  if (action === "reauthentication") {
    if (!code) throw new PayloadError("email_data.token: is required for reauthentication");
    return [authEmail({ kind: "reauthentication", to: user.email, name, code })];
  }

  const newEmail = user.new_email;
  if (!newEmail) throw new PayloadError("user.new_email: is required for email_change");
  const change = { name, currentEmail: user.email, newEmail };
  const toNew = { ...change, kind: "email_change_new" as const, to: newEmail, link: verifyLink(data, data.token_hash, action) };
  if (data.token_hash && data.token_hash_new) {
    const toCurrent = {
      ...change,
      kind: "email_change_current" as const,
      to: user.email,
      link: verifyLink(data, data.token_hash_new, action),
    };
    return [authEmail({ ...toCurrent, code }), authEmail({ ...toNew, code: codeNew })];
  }
  return [authEmail({ ...toNew, code: code ?? codeNew })];
}
