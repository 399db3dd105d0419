import { hex } from "../hex.ts";
import { withinSkew } from "./timestamp-skew.ts";

// The contract's own scheme for the onboarding webhook: x-timestamp, x-nonce and x-signature, the
// HMAC-SHA256 of the canonical request under SIGNING_SECRET.

/** The path of the signed onboarding webhook: part of what is signed. */
export const ONBOARDING_PATH = "/api/v2/automations/create/account";
/** Every signed call's path starts here (onboarding, the lifecycle calls); each signs its own path. */
export const AUTOMATIONS_PREFIX = "/api/v2/automations/";
/** x-nonce: printable ASCII without spaces, as headers carry it; a UUID is ideal. Bounded for storage. */
export const NONCE = /^[\x21-\x7e]{1,128}$/;
/** x-signature: the lowercase hex of an HMAC-SHA256 digest. */
export const SIGNATURE = /^[0-9a-f]{64}$/;

const encoder = new TextEncoder();

/**
 * The bytes that are signed: `POST`, the path, x-timestamp and x-nonce, each followed by a newline,
 * then the raw request body exactly as sent (its bytes, never a re-encoded parse). The path is the
 * request's own (onboarding's by default), so a signature made for one call is no signature at another.
 */
export function canonicalRequest(timestamp: string, nonce: string, body: Uint8Array, path: string = ONBOARDING_PATH): Uint8Array<ArrayBuffer> {
  const head = encoder.encode(`POST\n${path}\n${timestamp}\n${nonce}\n`);
  const bytes = new Uint8Array(head.byteLength + body.byteLength);
  bytes.set(head);
  bytes.set(body, head.byteLength);
  return bytes;
}

function importKey(secret: string, usage: "sign" | "verify"): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [usage]);
}

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/**
 * The x-signature for a request: lowercase hex HMAC-SHA256 of the canonical request.
 *
 * @example
 * const signature = await signRequest(secret, "1795000000", crypto.randomUUID(), body);
 */
export async function signRequest(secret: string, timestamp: string, nonce: string, body: Uint8Array, path: string = ONBOARDING_PATH): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await importKey(secret, "sign"), canonicalRequest(timestamp, nonce, body, path));
  return hex(mac);
}

/** Checks the signature headers of one request; resolves to its nonce when they hold, else undefined. */
export type SignatureVerifier = (headers: Headers, body: Uint8Array, nowMs: number) => Promise<string | undefined>;

/**
 * A verifier for `secret` and, while a rotation is under way, `previous` (each imported once). It
 * checks the three headers' form, the timestamp's skew (`withinSkew`) and
 * the HMAC over the raw body, compared in constant time by Web Crypto's `verify`. Both secrets are
 * always tried, so the answer's timing does not tell which one signed. Without a secret (or with an
 * empty one) nothing verifies, whatever `previous` is. Recording the nonce is the caller's next
 * step, in one table whichever secret signed, so only a request that proved a secret can use up a
 * nonce, and a nonce used with one secret is spent for the other.
 *
 * @example
 * const verify = signatureVerifier(config.SIGNING_SECRET, config.SIGNING_SECRET_PREVIOUS);
 * const nonce = await verify(request.headers, body, Date.now());
 */
export function signatureVerifier(secret: string | undefined, previous?: string, path: string = ONBOARDING_PATH): SignatureVerifier {
  const secrets = secret ? [secret, ...(previous ? [previous] : [])] : [];
  const keys = secrets.map((candidate) => importKey(candidate, "verify"));
  return async function verifySignature(headers, body, nowMs) {
    if (keys.length === 0) return undefined;
    const timestamp = headers.get("x-timestamp") ?? "";
    const nonce = headers.get("x-nonce") ?? "";
    const signature = headers.get("x-signature") ?? "";
    if (!withinSkew(timestamp, nowMs) || !NONCE.test(nonce) || !SIGNATURE.test(signature)) return undefined;
    const digest = hexToBytes(signature);
    const signed = canonicalRequest(timestamp, nonce, body, path);
    const valid = await Promise.all(keys.map(async (key) => crypto.subtle.verify("HMAC", await key, digest, signed)));
    return valid.includes(true) ? nonce : undefined;
  };
}
