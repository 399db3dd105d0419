import { Email } from "../email.ts";
import { Failure, type FailureCode } from "../errors.ts";
import type { Known } from "../read-path/last-known-good.ts";
import { LicenseKey } from "../license-key.ts";
import { type LicenseResponse, SystemName, type SystemNameStatus } from "./schemas.ts";
import * as store from "./store.ts";

const failureOf: Record<Exclude<store.Validation["outcome"], "valid">, FailureCode> = {
  key_not_found: "license_not_found",
  key_inactive: "license_inactive",
  user_not_found: "user_not_found",
  not_owner: "key_not_owned",
};

/** A present, non-blank string field, trimmed; null otherwise. */
function requiredString(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : null;
}

/**
 * The contract's license validation on the fields of a JSON object body. When several checks fail, the first in the contract's
 * own list wins: `license_key is required`, `email_address is required`, `license key not found`,
 * `license key is not active`, `user does not exist`, `key does not belong to specified user`.
 * A blank field counts as missing. A key not of the license-key shape is `not found` without asking
 * the database (no such key can exist); an e-mail that is not an e-mail of at most 254 characters
 * is `user does not exist`, after the key's own checks. The systemName never fails validation.
 *
 * `check` runs the validation in the database (batched: `store.validateLicenses`, or
 * `store.validateAndNameLicenses` with a name), or answers it as it was last answered (its `age`),
 * which the answer keeps.
 *
 * @example
 * const { value } = await validateLicense(async (input) => ({ value: (await store.validateLicenses(db, [input]))[0], age: null }), fields);
 */
export async function validateLicense(
  check: (input: store.ValidationInput) => Promise<Known<store.Validation>>,
  fields: Record<string, unknown>,
): Promise<Known<LicenseResponse>> {
  const key = requiredString(fields.license_key);
  if (key === null) throw new Failure("license_key_required");
  const email = requiredString(fields.email_address);
  if (email === null) throw new Failure("email_address_required");
  if (!LicenseKey.safeParse(key).success) throw new Failure("license_not_found");

  // A malformed e-mail (Email also refuses NUL, which Postgres text cannot hold) matches no user.
  const accountEmail = Email.safeParse(email).success ? email : null;
  const name = fields.systemName === undefined ? undefined : SystemName.safeParse(fields.systemName);

  const { value: validation, age } = await check({
    key,
    email: accountEmail,
    systemName: name?.success ? name.data : null,
  });
  if (validation.outcome !== "valid") throw new Failure(failureOf[validation.outcome]);
  const systemNameStatus: SystemNameStatus = name === undefined || name.success ? validation.systemNameStatus : "invalid";
  return { value: { key, email_address: validation.ownerEmail, systemNameStatus }, age };
}
