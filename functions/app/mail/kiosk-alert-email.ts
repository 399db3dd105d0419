import { escapeHtml, htmlDocument } from "./html.ts";
import type { EmailMessage } from "./mailer.ts";

/** One kiosk in an alert e-mail: gone dark, or seen again. */
export interface KioskChange {
  kind: "dark" | "back";
  licenseKey: string;
  systemName: string | null;
  timeZone: string;
  /** The kiosk's last sighting before it went dark, in its local time (`YYYY-MM-DD HH:MM`). */
  lastSeenLocal: string;
  /** For `back`: the sighting that ended the outage, in its local time. */
  backLocal: string | null;
  /** The block it should have been playing when it was found dark. */
  block: { weekday: string | null; startTime: string; endTime: string } | null;
}

export interface KioskAlertEmail {
  to: string;
  /** The account's display name: escaped in the HTML body. */
  name: string;
  changes: KioskChange[];
}

/** How the e-mail names a kiosk: its system name with its key, so an unnamed one is still found. */
const kioskName = (change: KioskChange) => change.systemName ? `${change.systemName} (${change.licenseKey})` : change.licenseKey;

function darkLine(change: KioskChange): string {
  const block = change.block
    ? `, during its block ${change.block.weekday ? `${change.block.weekday} ` : ""}${change.block.startTime}-${change.block.endTime}`
    : "";
  return `${kioskName(change)}: not seen since ${change.lastSeenLocal} (${change.timeZone})${block}`;
}

const backLine = (change: KioskChange) =>
  `${kioskName(change)}: seen again at ${change.backLocal} (${change.timeZone}), after going dark following ${change.lastSeenLocal}`;

/**
 * The offline alert: one e-mail per account per pass, listing every kiosk that went dark and every
 * one seen again, so a venue losing power sends one message, not one per kiosk.
 *
 * @example
 * const message = kioskAlertEmail({ to: "ada@example.com", name: "Ada", changes });
 */
export function kioskAlertEmail({ to, name, changes }: KioskAlertEmail): EmailMessage {
  const dark = changes.filter((change) => change.kind === "dark");
  const back = changes.filter((change) => change.kind === "back");
  const count = (n: number) => (n === 1 ? "1 kiosk" : `${n} kiosks`);
  const subject = [dark.length > 0 ? `${count(dark.length)} offline` : "", back.length > 0 ? `${count(back.length)} back online` : ""]
    .filter(Boolean).join(", ");
  const sections = [
    { title: "Offline: these kiosks should be playing but have not called Cadence.", lines: dark.map(darkLine) },
    { title: "Back online:", lines: back.map(backLine) },
  ].filter((section) => section.lines.length > 0);
  const closing = "You get one e-mail when a kiosk goes dark and one when it is back. To stop them for a kiosk, mute its alerts (license_keys.alerts_muted).";
  const text = [
    `Hello ${name},`,
    "",
    ...sections.flatMap((section) => [section.title, ...section.lines.map((line) => `  - ${line}`), ""]),
    closing,
  ].join("\n");
  const html = htmlDocument([
    `<p>${escapeHtml(`Hello ${name},`)}</p>`,
    ...sections.map((section) =>
      `<p>${escapeHtml(section.title)}</p>\n<ul>${section.lines.map((line) => `<li>${escapeHtml(line)}</li>`).join("")}</ul>`
    ),
    `<p>${escapeHtml(closing)}</p>`,
  ]);
  return { to, subject: `Cadence: ${subject}`, text, html };
}
