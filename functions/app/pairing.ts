import { Failure } from "./errors.ts";

/**
 * How `cadence.license_pairing` pairs a license key with an e-mail; every endpoint that checks a key
 * against an e-mail maps these to its own messages of the contract.
 */
export type PairingOutcome = "key_not_found" | "user_not_found" | "not_owner" | "paired";

/**
 * The contract's proclamation and legacy schedule reads on a pairing outcome (undefined: no answer): another user's key is
 * `key_not_yours`, any other outcome but `paired` is `not_authorized`.
 */
export function requirePaired(outcome: PairingOutcome | undefined): void {
  if (outcome === "not_owner") throw new Failure("key_not_yours");
  if (outcome !== "paired") throw new Failure("not_authorized");
}
