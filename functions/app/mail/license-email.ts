import { codeParagraph, escapeHtml, htmlDocument } from "./html.ts";
import type { EmailMessage } from "./mailer.ts";

export interface LicenseEmail {
  to: string;
  /** The account's display name, as the integrator sent it: escaped in the HTML body. */
  name: string;
  key: string;
}

/**
 * The e-mail that carries a new license key: one template, a text and an HTML body, the key and
 * the e-mail address the kiosk asks for in both.
 *
 * @example
 * const message = licenseEmail({ to: "ada@example.com", name: "Ada", key: "ABCD-EFGH-JKLM-NPQR" });
 */
export function licenseEmail({ to, name, key }: LicenseEmail): EmailMessage {
  const lines = {
    greeting: (who: string) => `Hello ${who},`,
    intro: "Here is your Cadence license key:",
    howTo: "To activate a kiosk, enter this key together with this e-mail address:",
    closing: "Keep this e-mail: the key is what pairs a kiosk with your account.",
  };
  const text = [
    lines.greeting(name),
    "",
    lines.intro,
    "",
    `    ${key}`,
    "",
    lines.howTo,
    `    ${to}`,
    "",
    lines.closing,
  ].join("\n");
  const html = htmlDocument([
    `<p>${escapeHtml(lines.greeting(name))}</p>`,
    `<p>${lines.intro}</p>`,
    codeParagraph(key),
    `<p>${lines.howTo}<br><strong>${escapeHtml(to)}</strong></p>`,
    `<p>${lines.closing}</p>`,
  ]);
  return { to, subject: "Your Cadence license key", text, html };
}
