import { codeParagraph, escapeHtml, htmlDocument } from "./html.ts";
import type { EmailMessage } from "./mailer.ts";

/** The account e-mails Supabase Auth asks Cadence to send; an e-mail change may need two. */
export type AuthEmailKind =
  | "signup"
  | "invite"
  | "magiclink"
  | "recovery"
  | "email_change_current"
  | "email_change_new"
  | "reauthentication";

export interface AuthEmail {
  kind: AuthEmailKind;
  to: string;
  /** The account's display name from the Auth user's metadata, when it has one. */
  name?: string;
  /** Auth's verify link that completes the action; reauthentication has none. */
  link?: string;
  /** The one-time code, to type in instead of following the link. */
  code?: string;
  /** For e-mail changes: the address being replaced, and the new one. */
  currentEmail?: string;
  newEmail?: string;
}

interface Template {
  subject: string;
  /** What the e-mail is about, as plain text (escaped for HTML). */
  intro(email: AuthEmail): string;
  /** The link's label; a kind without one is sent without a link. */
  action?: string;
  closing: string;
}

const NOT_YOU = "If you did not ask for this, you can ignore this e-mail.";

/** One table of templates: each renders to a text and an HTML body below. */
const templates: Record<AuthEmailKind, Template> = {
  signup: {
    subject: "Confirm your Cadence account",
    intro: () => "Confirm this e-mail address to finish creating your Cadence account.",
    action: "Confirm e-mail address",
    closing: NOT_YOU,
  },
  invite: {
    subject: "You are invited to Cadence",
    intro: () => "You have been invited to a Cadence account. Accept the invitation to set it up.",
    action: "Accept the invitation",
    closing: NOT_YOU,
  },
  magiclink: {
    subject: "Your Cadence sign-in link",
    intro: () => "Follow this link to sign in to Cadence. It works once and expires soon.",
    action: "Sign in",
    closing: NOT_YOU,
  },
  recovery: {
    subject: "Reset your Cadence password",
    intro: () => "A password reset was asked for the Cadence account of this e-mail address.",
    action: "Choose a new password",
    closing: "If it was not you, ignore this e-mail: your password stays as it is.",
  },
  email_change_current: {
    subject: "Confirm the change of your Cadence e-mail address",
    intro: ({ currentEmail, newEmail }) =>
      `A change of your Cadence account's e-mail address from ${currentEmail} to ${newEmail} was asked. Confirm it from this address too.`,
    action: "Confirm the change",
    closing: "If it was not you, do not confirm, and change your password.",
  },
  email_change_new: {
    subject: "Confirm your new Cadence e-mail address",
    intro: ({ newEmail }) => `Confirm ${newEmail} as the new e-mail address of your Cadence account.`,
    action: "Confirm new e-mail address",
    closing: NOT_YOU,
  },
  reauthentication: {
    subject: "Your Cadence verification code",
    intro: () => "Enter this code to confirm it is you.",
    closing: NOT_YOU,
  },
};

/**
 * An account e-mail (sign-up, invitation, sign-in link, password reset, e-mail change,
 * reauthentication) from the table of templates: a text and an HTML body from one source, every
 * value escaped in HTML.
 *
 * @example
 * const message = authEmail({ kind: "magiclink", to: "ada@example.com", link, code: "123456" });
 */
export function authEmail(email: AuthEmail): EmailMessage {
  const template = templates[email.kind];
  const greeting = email.name ? `Hello ${email.name},` : "Hello,";
  const intro = template.intro(email);
  const link = template.action && email.link ? { label: template.action, url: email.link } : undefined;
  const codeLabel = link ? "Or enter this code:" : "Your code:";

  const text = [greeting, "", intro];
  if (link) text.push("", `${link.label}:`, `    ${link.url}`);
  if (email.code) text.push("", codeLabel, `    ${email.code}`);
  text.push("", template.closing);

  const html = [`<p>${escapeHtml(greeting)}</p>`, `<p>${escapeHtml(intro)}</p>`];
  if (link) html.push(`<p><a href="${escapeHtml(link.url)}">${escapeHtml(link.label)}</a></p>`);
  if (email.code) html.push(`<p>${escapeHtml(codeLabel)}</p>`, codeParagraph(email.code));
  html.push(`<p>${escapeHtml(template.closing)}</p>`);

  return { to: email.to, subject: template.subject, text: text.join("\n"), html: htmlDocument(html) };
}
