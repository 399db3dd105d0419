import * as z from "zod";
import { type Database, sqlTimestamp } from "../db/database.ts";
import type { Logger } from "../log.ts";
import { seatDigestEmail } from "../mail/seat-digest-email.ts";

/** What the seat-check pass needs: the database, the clock and the log. */
export interface SeatCheckPorts {
  db: Database;
  now: () => number;
  log: Logger;
}

export interface SeatCheckReport {
  /** Keys a rule flagged in this pass (a key already suspected counts again). */
  flagged: number;
  /** Whether this pass queued the daily digest. */
  digest: boolean;
}

const Suspect = z.object({
  licenseKey: z.string(),
  systemName: z.string().nullable(),
  rules: z.array(z.string()),
  firstFlaggedAt: z.string(),
  lastFlaggedAt: z.string(),
  unevenPolls: z.number(),
});
const Digest = z.object({ recipient: z.string(), since: z.union([z.null(), z.coerce.date()]), suspects: z.array(Suspect) });

/**
 * One seat-check pass, in the scheduled run before the outbox delivery: records the keys the rules
 * flag now (cadence.seat_check_pass holds them), then, once a day when staff set
 * `seat_watch.digest_to`, queues the digest of the keys flagged since the previous one. Nobody is
 * refused: staff decide.
 *
 * @example
 * const report = await checkSeats(deps);
 */
export async function checkSeats(ports: SeatCheckPorts): Promise<SeatCheckReport> {
  const at = sqlTimestamp(ports.now());
  const [pass] = await ports.db.query<{ flagged: number }>("select cadence.seat_check_pass($1::timestamptz) as flagged", [at]);
  const [due] = (await ports.db.query("select * from cadence.seat_digest($1::timestamptz)", [at])).map((row) => Digest.parse(row));
  let digest = false;
  if (due) {
    const message = seatDigestEmail({ to: due.recipient, suspects: due.suspects });
    const [queued] = await ports.db.query<{ id: string | null }>(
      "select cadence.queue_seat_digest($1::timestamptz, $2, $3, $4, $5::timestamptz) as id",
      [due.since === null ? null : sqlTimestamp(due.since.getTime()), message.subject, message.text, message.html, at],
    );
    digest = queued.id !== null;
  }
  if (pass.flagged > 0 || digest) ports.log("info", "seat_checks", { flagged: pass.flagged, digest });
  return { flagged: pass.flagged, digest };
}
