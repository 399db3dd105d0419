import type postgres from "postgres";
import { openPostgres } from "../../functions/app/db/postgres.ts";
import type { Mailer } from "../../functions/app/mail/mailer.ts";
import { runScheduledPass } from "../../functions/app/scheduled-pass.ts";
import type { Kiosk } from "./fleet.ts";

// Kiosks that go dark and come back, and the offline alerts they must cause (issue 35): the dark
// ones stop calling for a window and call again after it; the scheduled run (offline alerts, then
// outbox delivery) runs every --pass-seconds, as pg_cron calls the `outbox` function; afterwards the
// recorded outages and the e-mails are judged against what the kiosks really did.

/** When the dark kiosks stop calling and start again, on the simulation's clock (ms). */
export interface DarkWindow {
  from: number;
  until: number;
}

/** What the dark kiosks really did, in epoch ms (the clock the database and the e-mails use). */
export class DarkLedger {
  /** The last answered call of each dark kiosk before its window. */
  readonly lastAnswered = new Map<string, number>();
  /** The first answered call of each dark kiosk after its window. */
  readonly backAnswered = new Map<string, number>();

  answered(kiosk: Kiosk, window: DarkWindow, simulationNow: number) {
    if (simulationNow < window.from) this.lastAnswered.set(kiosk.key, Date.now());
    else if (simulationNow >= window.until && !this.backAnswered.has(kiosk.key)) this.backAnswered.set(kiosk.key, Date.now());
  }
}

/**
 * The dark window for a run, or undefined when the run is too short to judge one: the kiosks go
 * dark after two poll intervals (booted and seen) and stay dark for the threshold plus two passes
 * and a poll interval (so each must be alerted); the run must then last a poll interval and a pass
 * longer, so each is seen again and its recovery sent.
 */
export function darkWindow(options: { pollMs: number; passMs: number; offlineMs: number; runMs: number }): DarkWindow | undefined {
  const from = 2 * options.pollMs;
  const until = from + options.offlineMs + 2 * options.passMs + options.pollMs;
  return until + options.pollMs + 2 * options.passMs <= options.runMs ? { from, until } : undefined;
}

/**
 * A fixed-offset zone in which it is now between 10:00 and 11:00, so every fleet kiosk is inside a
 * block of its schedule for the run whatever the hour (daily 08:00-12:00, weekly 09:00-17:00): the
 * false-alert count then means something at any time of day. `Etc/GMT-3` is UTC+3.
 */
export function zoneForTenOClock(at = new Date()): string {
  const offset = ((10 - at.getUTCHours() + 12 + 24) % 24) - 12;
  return offset === 0 ? "Etc/GMT" : `Etc/GMT${offset > 0 ? "-" : "+"}${Math.abs(offset)}`;
}

/** Gives the fleet's venues the run's zone and threshold. */
export async function prepareAlerts(sql: postgres.Sql, zone: string, offlineSeconds: number) {
  await sql.unsafe(
    "update public.accounts set time_zone = $1, offline_alert_after = make_interval(secs => $2) where email like '%@fleet.example'",
    [zone, offlineSeconds],
  );
}

/**
 * The scheduled run every `passMs` until `until` (simulation ms), as the `outbox` function runs it:
 * through the pooler, one connection, e-mails to a mailer that keeps them. A run that fails (the
 * database restarting) is counted and the next one goes on.
 */
export async function runPasses(url: string, passMs: number, now: () => number, until: number) {
  const db = openPostgres(url, { max: 1, transactionPooler: true });
  const mailer: Mailer = { send: () => Promise.resolve() };
  let runs = 0;
  let failed = 0;
  try {
    for (let next = passMs; next <= until; next += passMs) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - now())));
      runs++;
      await runScheduledPass({ db, mailer, now: Date.now, log: () => {} }).catch(() => failed++);
    }
  } finally {
    await db.close();
  }
  return { runs, failed };
}

export interface AlertJudgement {
  darkKiosks: number;
  alerted: number;
  recovered: number;
  /** From the threshold's end (last answered call + threshold) to the alert e-mail's delivery. */
  alertDelayMs: { min: number; max: number };
  /** From the first answered call after the window to the recovery e-mail's delivery. */
  recoveryDelayMs: { min: number; max: number };
  /** Alerts or recoveries later than one pass (and the run's own few seconds). */
  late: number;
  /** Dark kiosks never alerted or never recovered. */
  missed: number;
  /** Outages of kiosks that never went dark, or more than one per dark kiosk, or before the threshold. */
  falseAlerts: number;
  emails: number;
}

/** Compares the recorded outages and the sent e-mails with what the dark kiosks did. */
export async function judgeAlerts(
  sql: postgres.Sql,
  ledger: DarkLedger,
  dark: Set<string>,
  options: { offlineMs: number; passMs: number; log: (line: string) => void },
): Promise<AlertJudgement> {
  const rows = await sql.unsafe<{ license_key: string; alert_sent: Date | null; recovery_sent: Date | null; last_seen_at: Date; alerted_at: Date; back_at: Date | null }[]>(
    `select o.license_key, a.sent_at as alert_sent, r.sent_at as recovery_sent, o.last_seen_at, o.alerted_at, o.back_at
       from public.kiosk_outages as o
       left join public.email_outbox as a on a.id = o.alert_email_id
       left join public.email_outbox as r on r.id = o.recovery_email_id`,
  );
  const [{ emails }] = await sql.unsafe<{ emails: number }[]>(
    "select count(distinct e)::int as emails from public.kiosk_outages as o, unnest(array[o.alert_email_id, o.recovery_email_id]) as e",
  );
  // Within one pass, with 2 s for the run's own statements and the e-mail's delivery; a recovery
  // also waits for the API's sighting write (every 5 s).
  const alertBound = options.passMs + 2_000;
  const recoveryBound = options.passMs + 7_000;
  const alertDelays: number[] = [];
  const recoveryDelays: number[] = [];
  let falseAlerts = 0;
  let late = 0;
  const seen = new Set<string>();
  for (const row of rows) {
    const last = ledger.lastAnswered.get(row.license_key);
    if (!dark.has(row.license_key) || seen.has(row.license_key) || last === undefined) {
      // What the database saw of it: the first few, to tell which fault or limit silenced it.
      if (falseAlerts < 5) {
        const at = (value: Date | null) => (value ? new Date(value).toISOString().slice(11, 19) : "-");
        options.log(`false alert: ${row.license_key.slice(0, 9)}…${dark.has(row.license_key) ? " (dark)" : ""} last seen ${at(row.last_seen_at)}, alerted ${at(row.alerted_at)}, back ${at(row.back_at)}`);
      }
      falseAlerts++;
      continue;
    }
    seen.add(row.license_key);
    if (row.alert_sent) {
      const delay = new Date(row.alert_sent).getTime() - (last + options.offlineMs);
      // An alert before the threshold ran out is a false one (the kiosk was not yet dark that long).
      if (delay < -1_000) falseAlerts++;
      else alertDelays.push(delay);
      if (delay > alertBound) late++;
    }
    const back = ledger.backAnswered.get(row.license_key);
    if (row.recovery_sent && back !== undefined) {
      const delay = new Date(row.recovery_sent).getTime() - back;
      recoveryDelays.push(delay);
      if (delay > recoveryBound) late++;
    }
  }
  const missed = [...dark].filter((key) => !rows.some((row) => row.license_key === key && row.alert_sent && row.recovery_sent)).length;
  const span = (values: number[]) => ({ min: values.length ? Math.min(...values) : 0, max: values.length ? Math.max(...values) : 0 });
  return {
    darkKiosks: dark.size,
    alerted: alertDelays.length,
    recovered: recoveryDelays.length,
    alertDelayMs: span(alertDelays),
    recoveryDelayMs: span(recoveryDelays),
    late,
    missed,
    falseAlerts,
    emails,
  };
}
