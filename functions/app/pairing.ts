/**
 * How `cadence.license_pairing` pairs a license key with an e-mail; every endpoint that checks a key
 * against an e-mail maps these to its own spec messages.
 */
export type PairingOutcome = "key_not_found" | "user_not_found" | "not_owner" | "paired";
