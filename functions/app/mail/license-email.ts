import type { EmailMessage } from "./mailer.ts";

const htmlEntities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => htmlEntities[char]);
}

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
  const html = [
    "<!doctype html>",
    '<html><body style="font-family: sans-serif; line-height: 1.5">',
    `<p>${escapeHtml(lines.greeting(name))}</p>`,
    `<p>${lines.intro}</p>`,
    `<p style="font-family: monospace; font-size: 1.4em; letter-spacing: 0.1em"><strong>${escapeHtml(key)}</strong></p>`,
    `<p>${lines.howTo}<br><strong>${escapeHtml(to)}</strong></p>`,
    `<p>${lines.closing}</p>`,
    "</body></html>",
  ].join("\n");
  return { to, subject: "Your Cadence license key", text, html };
}
