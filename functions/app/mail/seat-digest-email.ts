import { escapeHtml, htmlDocument } from "./html.ts";
import type { EmailMessage } from "./mailer.ts";

/** One suspected key in the digest. */
export interface SuspectedCopy {
  licenseKey: string;
  systemName: string | null;
  rules: string[];
  /** ISO timestamps (UTC). */
  firstFlaggedAt: string;
  lastFlaggedAt: string;
  /** Its uneven polls in the current and previous hour (the uneven_polls rule's evidence). */
  unevenPolls: number;
}

const line = (suspect: SuspectedCopy) =>
  `${suspect.systemName ? `${suspect.systemName} (${suspect.licenseKey})` : suspect.licenseKey}: ${suspect.rules.join(", ")}; ` +
  `first flagged ${suspect.firstFlaggedAt}, last ${suspect.lastFlaggedAt}; ${suspect.unevenPolls} uneven poll${suspect.unevenPolls === 1 ? "" : "s"} in the last two hours`;

/**
 * The staff digest of the seat checks: the license keys flagged since the previous digest as
 * possibly used by more than one kiosk. Nobody was refused; staff decide.
 *
 * @example
 * const message = seatDigestEmail({ to: "staff@example.com", suspects });
 */
export function seatDigestEmail({ to, suspects }: { to: string; suspects: SuspectedCopy[] }): EmailMessage {
  const count = suspects.length === 1 ? "1 license key" : `${suspects.length} license keys`;
  const intro = `${count} may be used by more than one kiosk (flagged since the previous digest):`;
  const closing = "The evidence is in public.suspected_copies. No kiosk was refused. To move an honest kiosk to a new key, " +
    "use sql/recipes/move-kiosk-to-new-key.sql; to stop a key, sql/recipes/deactivate-key.sql.";
  const text = [intro, ...suspects.map((suspect) => `  - ${line(suspect)}`), "", closing].join("\n");
  const html = htmlDocument([
    `<p>${escapeHtml(intro)}</p>`,
    `<ul>${suspects.map((suspect) => `<li>${escapeHtml(line(suspect))}</li>`).join("")}</ul>`,
    `<p>${escapeHtml(closing)}</p>`,
  ]);
  return { to, subject: `Cadence: ${count} possibly copied`, text, html };
}
