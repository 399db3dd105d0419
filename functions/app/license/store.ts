import { rowsByRead } from "../read-path/batch-while-busy.ts";
import type { Database, QueryOptions } from "../db/database.ts";

/** cadence.validate_license's answer: the first failure in the contract's order, or a valid key's details. */
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
 * answered as `validateLicense` answers it: cadence.validate_licenses locks the keys it records in
 * key order, so two batches cannot deadlock, and records a key validated several times in a batch
 * with one write (within one statement `now()` is one instant). Identical validations (same key and
 * e-mail) are sent once, as their answers are the same. A system name takes an account lock after
 * the key's, so validations with one are never batched.
 */
export async function validateLicenses(
  db: Database,
  inputs: ReadonlyArray<Omit<ValidationInput, "systemName">>,
  options?: QueryOptions,
) {
  const pair = (input: Omit<ValidationInput, "systemName">) => `${input.key} ${input.email}`;
  const unique = [...new Map(inputs.map((input) => [pair(input), input])).values()];
  const rows = await db.query<{ n: string; outcome: Validation["outcome"]; owner_email: string }>(
    "select n, outcome, owner_email from cadence.validate_licenses($1::text[], $2::text[])",
    [unique.map((input) => input.key), unique.map((input) => input.email)],
    options,
  );
  const answers = new Map(
    rowsByRead(unique.length, rows).map((row, at) => [pair(unique[at]), validation({ ...row!, system_name_status: "unchanged" })]),
  );
  return inputs.map((input) => answers.get(pair(input))!);
}

/** cadence.set_system_name's outcome; `unchanged` wrote nothing. */
export type SetSystemNameOutcome = "ok" | "unchanged" | "taken" | "unknown_license";

/** Sets a key's system name (already valid and trimmed). */
export async function setSystemName(db: Database, key: string, name: string): Promise<SetSystemNameOutcome> {
  const [row] = await db.query<{ outcome: SetSystemNameOutcome }>("select cadence.set_system_name($1, $2) as outcome", [key, name]);
  return row.outcome;
}
