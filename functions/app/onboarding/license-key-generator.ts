const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
/** 252 is the largest multiple of 36 a byte can hold: larger bytes are redrawn, so no character is favoured. */
const UNBIASED_BELOW = 252;
const KEY_LENGTH = 16;

/** A source of random bytes; the default is the platform's cryptographic generator. */
export type RandomBytes = (size: number) => Uint8Array;

export const cryptoRandomBytes: RandomBytes = (size) => crypto.getRandomValues(new Uint8Array(size));

/**
 * A new license key: 16 characters of [A-Z0-9], each drawn uniformly (rejection sampling), in the
 * contract's blocks of four (`XXXX-XXXX-XXXX-XXXX`).
 *
 * @example
 * generateLicenseKey(); // "Q7ZK-2M0D-XW4B-91TE"
 */
export function generateLicenseKey(randomBytes: RandomBytes = cryptoRandomBytes): string {
  let characters = "";
  while (characters.length < KEY_LENGTH) {
    for (const byte of randomBytes(KEY_LENGTH)) {
      if (byte < UNBIASED_BELOW && characters.length < KEY_LENGTH) characters += ALPHABET[byte % ALPHABET.length];
    }
  }
  return characters.match(/.{4}/g)!.join("-");
}
