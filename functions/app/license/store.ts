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

/**
 * Validates `key` for `email` (null: an address no account can have) and, when valid, records
 * last_validated_at in the same statement and sets `systemName` (already valid and trimmed) if given.
 */
export async function validateLicense(
  db: Database,
  input: { key: string; email: string | null; systemName: string | null },
): Promise<Validation> {
  const [row] = await db.query<{ outcome: Validation["outcome"]; owner_email: string; system_name_status: "ok" | "unchanged" | "conflict" }>(
    "select outcome, owner_email, system_name_status from cadence.validate_license($1, $2, $3)",
    [input.key, input.email, input.systemName],
  );
  if (row.outcome !== "valid") return { outcome: row.outcome };
  return { outcome: "valid", ownerEmail: row.owner_email, systemNameStatus: row.system_name_status };
}

/** cadence.set_system_name's outcome; `unchanged` wrote nothing. */
export type SetSystemNameOutcome = "ok" | "unchanged" | "taken" | "unknown_license";

/** Sets a key's system name (already valid and trimmed). */
export async function setSystemName(db: Database, key: string, name: string): Promise<SetSystemNameOutcome> {
  const [row] = await db.query<{ outcome: SetSystemNameOutcome }>("select cadence.set_system_name($1, $2) as outcome", [key, name]);
  return row.outcome;
}
