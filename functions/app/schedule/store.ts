import { rowsByRead } from "../batch-while-busy.ts";
import type { Database, QueryOptions } from "../db/database.ts";
import type { PairingOutcome } from "../pairing.ts";

/** A key's stored payload fingerprint, with the payload text only when it differs from the one held. */
export interface ScheduleRow {
  fingerprint: string;
  body: string | null;
}

/** The legacy read's answer: the pairing outcome and, when paired, the `ScheduleRow` fields. */
export interface LegacyScheduleRow {
  outcome: PairingOutcome;
  fingerprint: string | null;
  body: string | null;
}

/** One poll: the key, and the fingerprint of the payload the caller already holds for it, if any. */
export interface ScheduleRead {
  key: string;
  fingerprint: string | null;
}

/** One legacy poll: a `ScheduleRead` with the e-mail the key is paired against. */
export interface LegacyScheduleRead extends ScheduleRead {
  email: string;
}

/**
 * Many polls in one statement (`batchWhileBusy` gathers them): for each, what
 * cadence.license_schedule_if_changed answers, or null when the key is unknown.
 */
export async function readSchedulesIfChanged(db: Database, reads: readonly ScheduleRead[], options?: QueryOptions) {
  const rows = await db.query<ScheduleRow & { n: string }>(
    `select r.n, s.fingerprint, s.payload::text as body
       from unnest($1::text[], $2::text[]) with ordinality as r(key, held, n)
      cross join lateral cadence.license_schedule_if_changed(r.key, r.held) as s`,
    [reads.map((read) => read.key), reads.map((read) => read.fingerprint)],
    options,
  );
  return rowsByRead<ScheduleRow>(reads.length, rows);
}

/** Many legacy polls in one statement: for each, what cadence.legacy_schedule_if_changed answers. */
export async function readLegacySchedulesIfChanged(db: Database, reads: readonly LegacyScheduleRead[], options?: QueryOptions) {
  const rows = await db.query<LegacyScheduleRow & { n: string }>(
    `select r.n, s.outcome, s.fingerprint, s.payload::text as body
       from unnest($1::text[], $2::text[], $3::text[]) with ordinality as r(key, email, held, n)
      cross join lateral cadence.legacy_schedule_if_changed(r.key, r.email, r.held) as s`,
    [reads.map((read) => read.key), reads.map((read) => read.email), reads.map((read) => read.fingerprint)],
    options,
  );
  return rowsByRead<LegacyScheduleRow>(reads.length, rows);
}
