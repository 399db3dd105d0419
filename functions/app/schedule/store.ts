import { rowsByRead } from "../read-path/batch-while-busy.ts";
import type { Database, QueryOptions } from "../db/database.ts";
import type { PairingOutcome } from "../pairing.ts";

/** The version of the schedule a key reads, with the payload text only when it differs from the version held. */
export interface ScheduleRow {
  version: string;
  body: string | null;
}

/** The legacy read's answer: the pairing outcome and, when paired, the `ScheduleRow` fields. */
export interface LegacyScheduleRow {
  outcome: PairingOutcome;
  version: string | null;
  body: string | null;
}

/** One poll: the key, and the version of the payload the caller already holds for it, if any. */
export interface ScheduleRead {
  key: string;
  version: string | null;
}

/** One legacy poll: a `ScheduleRead` with the e-mail the key is paired against. */
export interface LegacyScheduleRead extends ScheduleRead {
  email: string;
}

/**
 * Many polls in one statement (`batchWhileBusy` gathers them), answered by one call of
 * cadence.license_schedules_unless_held: for each, a `ScheduleRow`, or null when the key is unknown.
 */
export async function readSchedulesIfChanged(db: Database, reads: readonly ScheduleRead[], options?: QueryOptions) {
  const rows = await db.query<ScheduleRow & { n: string }>(
    "select s.n, s.version, s.payload::text as body from cadence.license_schedules_unless_held($1::text[], $2::text[]) as s",
    [reads.map((read) => read.key), reads.map((read) => read.version)],
    options,
  );
  return rowsByRead<ScheduleRow>(reads.length, rows);
}

/** Many legacy polls in one statement, answered by one call of cadence.legacy_schedules_unless_held. */
export async function readLegacySchedulesIfChanged(db: Database, reads: readonly LegacyScheduleRead[], options?: QueryOptions) {
  const rows = await db.query<LegacyScheduleRow & { n: string }>(
    "select s.n, s.outcome, s.version, s.payload::text as body from cadence.legacy_schedules_unless_held($1::text[], $2::text[], $3::text[]) as s",
    [reads.map((read) => read.key), reads.map((read) => read.email), reads.map((read) => read.version)],
    options,
  );
  return rowsByRead<LegacyScheduleRow>(reads.length, rows);
}
