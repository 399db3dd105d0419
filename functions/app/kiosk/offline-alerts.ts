import * as z from "zod";
import { type Database, sqlTimestamp } from "../db/database.ts";
import type { Logger } from "../log.ts";
import { kioskAlertEmail } from "../mail/kiosk-alert-email.ts";

/** What the alert pass needs: the database, the clock and the log. */
export interface OfflineAlertPorts {
  db: Database;
  now: () => number;
  log: Logger;
}

export interface OfflineAlertReport {
  /** No kiosk at all seen lately: Cadence itself was down or unreachable, and nobody was alerted. */
  blind: boolean;
  /** The pass restarted its watch (a gap in passes, or blind): every kiosk got a full threshold again. */
  watchRestarted: boolean;
  wentDark: number;
  cameBack: number;
  /** E-mails queued, one per account with changes. */
  emails: number;
}

const PassRow = z.object({ blind: z.boolean(), blind_began: z.boolean(), watch_restarted: z.boolean(), went_dark: z.number(), came_back: z.number() });

const Change = z.object({
  outageId: z.string(),
  kind: z.enum(["dark", "back"]),
  licenseKey: z.string(),
  systemName: z.string().nullable(),
  timeZone: z.string(),
  lastSeenLocal: z.string(),
  backLocal: z.string().nullable(),
  block: z.object({ weekday: z.string().nullable(), startTime: z.string(), endTime: z.string() }).nullable(),
});
const Unannounced = z.object({ account_id: z.string(), recipient: z.string(), display_name: z.string(), changes: z.array(Change) });

/**
 * One offline-alert pass, run before each outbox delivery in the same scheduled run: records the
 * kiosks that went dark and those seen again (cadence.kiosk_alert_pass holds the rules), then
 * queues one e-mail per account listing every change not yet announced, including any a crashed
 * earlier run recorded but did not queue. The delivery that follows sends them; the outbox
 * retries a failed send.
 *
 * @example
 * const report = await alertOfflineKiosks(deps);
 */
export async function alertOfflineKiosks(ports: OfflineAlertPorts): Promise<OfflineAlertReport> {
  const at = sqlTimestamp(ports.now());
  const [pass] = (await ports.db.query("select * from cadence.kiosk_alert_pass($1::timestamptz)", [at])).map((row) => PassRow.parse(row));
  // Once per blind spell, not every minute of it; a fleet never seen (a fresh demo) is no outage.
  if (pass.blind_began) await logBlind(ports);
  const accounts = (await ports.db.query("select * from cadence.unannounced_kiosk_alerts()")).map((row) => Unannounced.parse(row));
  let emails = 0;
  for (const account of accounts) {
    const message = kioskAlertEmail({ to: account.recipient, name: account.display_name, changes: account.changes });
    const ids = (kind: "dark" | "back") => account.changes.filter((change) => change.kind === kind).map((change) => change.outageId);
    const [queued] = await ports.db.query<{ id: string | null }>(
      "select cadence.queue_kiosk_alert_email($1::uuid[], $2::uuid[], $3, $4, $5, $6, $7::timestamptz) as id",
      [ids("dark"), ids("back"), message.to, message.subject, message.text, message.html, at],
    );
    if (queued.id) emails += 1;
  }
  const report = { blind: pass.blind, watchRestarted: pass.watch_restarted, wentDark: pass.went_dark, cameBack: pass.came_back, emails };
  if (report.wentDark + report.cameBack + report.emails > 0) ports.log("info", "kiosk_alerts", { ...report });
  return report;
}

/** Why the pass reported no kiosk: none has ever called, or none lately (Cadence was down). */
async function logBlind(ports: OfflineAlertPorts) {
  const [{ seen }] = await ports.db.query<{ seen: boolean }>("select exists (select from public.kiosk_sightings) as seen");
  if (seen) ports.log("warn", "kiosk_alerts_blind", { reason: "no kiosk seen lately: Cadence was down or unreachable, no kiosk is reported dark" });
  else ports.log("info", "kiosk_alerts_waiting", { reason: "no kiosk has called yet: offline alerts start with the first one seen" });
}
