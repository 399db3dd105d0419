import { rowsByRead } from "../db/batch-while-busy.ts";
import type { Database } from "../db/database.ts";

/** cadence.validate_license's answer: the first failure in spec order, or a valid key's details. */
export type Validation =
  | { outcome: "key_not_found" | "key_inactive" | "user_not_found" | "not_owner" }
  | {
    outcome: "valid";
    ownerEmail: string;
    /** `unchanged` when no name was given, else `ok` or `conflict`. */
    systemNameStatus: "ok" | "unchanged" | "conflict";
  };

/** One validation: `email` null is an address no account can have; `systemName` is already valid and trimmed. */
export interface ValidationInput {
  key: string;
  email: string | null;
  systemName: string | null;
}

type ValidationRow = { outcome: Validation["outcome"]; owner_email: string; system_name_status: "ok" | "unchanged" | "conflict" };

function validation(row: ValidationRow): Validation {
  if (row.outcome !== "valid") return { outcome: row.outcome };
  return { outcome: "valid", ownerEmail: row.owner_email, systemNameStatus: row.system_name_status };
}

/**
 * Validates `key` for `email` and, when valid, records last_validated_at in the same statement and
 * sets `systemName` if given.
 */
export async function validateLicense(db: Database, input: ValidationInput): Promise<Validation> {
  const [row] = await db.query<ValidationRow>(
    "select outcome, owner_email, system_name_status from cadence.validate_license($1, $2, $3)",
    [input.key, input.email, input.systemName],
  );
  return validation(row);
}

/**
 * Many validations without a system name in one statement (`batchWhileBusy` gathers them), each
 * as `validateLicense` answers it. Keys are validated in key order, so two batches lock the rows
 * they record in the same order and cannot deadlock; a batch takes no other lock (a system name
 * takes an account lock, which is why validations with one are never batched). Identical
 * validations in one batch are run once: within one statement `now()` is the same instant, so
 * recording a key once or n times stores the same last_validated_at.
 */
export async function validateLicenses(db: Database, inputs: ReadonlyArray<Omit<ValidationInput, "systemName">>) {
  const unique = new Map(inputs.map((input) => [`${input.key} ${input.email}`, input]));
  const reads = [...unique.values()];
  const rows = await db.query<ValidationRow & { n: string }>(
    `select r.n, v.outcome, v.owner_email, v.system_name_status
       from (select * from unnest($1::text[], $2::text[]) with ordinality as u(key, email, n) order by u.key) as r
      cross join lateral cadence.validate_license(r.key, r.email) as v`,
    [reads.map((read) => read.key), reads.map((read) => read.email)],
  );
  const byPair = new Map<string, Validation>();
  rowsByRead<ValidationRow>(reads.length, rows).forEach((row, at) => {
    byPair.set(`${reads[at].key} ${reads[at].email}`, validation(row!));
  });
  return inputs.map((input) => byPair.get(`${input.key} ${input.email}`)!);
}

/** cadence.set_system_name's outcome; `unchanged` wrote nothing. */
export type SetSystemNameOutcome = "ok" | "unchanged" | "taken" | "unknown_license";

/** Sets a key's system name (already valid and trimmed). */
export async function setSystemName(db: Database, key: string, name: string): Promise<SetSystemNameOutcome> {
  const [row] = await db.query<{ outcome: SetSystemNameOutcome }>("select cadence.set_system_name($1, $2) as outcome", [key, name]);
  return row.outcome;
}
