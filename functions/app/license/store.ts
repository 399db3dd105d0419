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
 * Many validations without a system name in one statement (`batchWhileBusy` gathers them), each
 * answered as `validateLicense` answers it: cadence.validate_licenses locks the keys it records in
 * key order, so two batches cannot deadlock, and records a key validated several times in a batch
 * with one write (within one statement `now()` is one instant). Validations that set a system name go in
 * batches of their own (`validateAndNameLicenses`): they write, through the write lane.
 */
export async function validateLicenses(
  db: Database,
  inputs: ReadonlyArray<Omit<ValidationInput, "systemName">>,
  options?: QueryOptions,
) {
  const rows = await db.query<{ n: string; outcome: Validation["outcome"]; owner_email: string }>(
    "select n, outcome, owner_email from cadence.validate_licenses($1::text[], $2::text[])",
    [inputs.map((input) => input.key), inputs.map((input) => input.email)],
    options,
  );
  return rowsByRead(inputs.length, rows).map((row) => validation({ ...row!, system_name_status: "unchanged" }));
}

/**
 * Many validations that set a system name in one statement (`batchWhileBusy` gathers them), each
 * answered as if it had run alone: cadence.validate_and_name_licenses validates as
 * cadence.validate_licenses does, then sets the valid keys' names in one cadence.set_system_names
 * call. One input's failure (an unknown key, a name taken) is its answer alone.
 *
 * @example
 * const [validation] = await validateAndNameLicenses(deps.writes, [{ key, email, systemName: "Front desk" }]);
 */
export async function validateAndNameLicenses(
  db: Database,
  inputs: ReadonlyArray<ValidationInput & { systemName: string }>,
  options?: QueryOptions,
): Promise<Validation[]> {
  const rows = await db.query<ValidationRow & { n: string }>(
    "select n, outcome, owner_email, system_name_status from cadence.validate_and_name_licenses($1::text[], $2::text[], $3::text[])",
    [inputs.map((input) => input.key), inputs.map((input) => input.email), inputs.map((input) => input.systemName)],
    options,
  );
  return rowsByRead(inputs.length, rows).map((row) => validation(row!));
}

/** cadence.set_system_names' outcome for one key; `unchanged` wrote nothing. */
export type SetSystemNameOutcome = "ok" | "unchanged" | "taken" | "unknown_license";

/** A system name asked for: the key, and the name (already valid and in its stored form). */
export interface NameAsk {
  key: string;
  name: string;
}

/**
 * Sets many keys' system names in one statement (`batchWhileBusy` gathers them), each answered as
 * if it had been set alone (cadence.set_system_names): two keys of one account asking for one
 * name in a batch, the first asked gets it and the other is `taken`; a key asked twice is named
 * twice, in order.
 *
 * @example
 * const [outcome] = await setSystemNames(deps.writes, [{ key, name: "Front desk" }]);
 */
export async function setSystemNames(db: Database, asks: readonly NameAsk[], options?: QueryOptions): Promise<SetSystemNameOutcome[]> {
  const rows = await db.query<{ n: string; outcome: SetSystemNameOutcome }>(
    "select n, outcome from cadence.set_system_names($1::text[], $2::text[])",
    [asks.map((ask) => ask.key), asks.map((ask) => ask.name)],
    options,
  );
  return rowsByRead(asks.length, rows).map((row) => row!.outcome);
}
