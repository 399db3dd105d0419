const encoder = new TextEncoder();

/** Bytes as lowercase hex, two digits a byte. */
export function hex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * The lowercase hex digest of `data` (text is hashed as its UTF-8 bytes).
 *
 * @example
 * await hexDigest("SHA-256", "abc"); // "ba7816bf..."
 */
export async function hexDigest(algorithm: "SHA-1" | "SHA-256", data: string | Uint8Array<ArrayBuffer>): Promise<string> {
  return hex(await crypto.subtle.digest(algorithm, typeof data === "string" ? encoder.encode(data) : data));
}
