import type { ErrorFields } from "./backend-messages.ts";

/**
 * SCRAM-SHA-256 (RFC 5802, RFC 7677) on the server's side, as Postgres 18's auth-scram.c and
 * auth-sasl.c run it, with Web Crypto (PBKDF2, HMAC-SHA-256, SHA-256):
 * - the username inside SCRAM is ignored (the startup packet's is the one), as libpq sends it empty;
 * - no channel binding (the port has no TLS): the client's gs2 flag is 'n' or 'y', and `c=` repeats it;
 * - no authzid, no mandatory extension; optional extensions are skipped;
 * - a user with no password here goes through the same exchange with a mock salt (stable per user
 *   name) and fails where a wrong password fails, with the same message, so the port tells nobody
 *   which roles exist;
 * - every check and comparison of secrets takes the same time whatever the bytes.
 * The password is taken as its UTF-8 bytes: Postgres and libpq prepare a non-ASCII password with
 * SASLprep first, so the configuration admits ASCII only, for which SASLprep changes nothing.
 */

export const SCRAM_SHA_256 = "SCRAM-SHA-256";
/** Postgres' defaults: scram_iterations = 4096, a 16-byte salt, an 18-byte server nonce. */
export const SCRAM_ITERATIONS = 4096;
const SALT_LENGTH = 16;
const RAW_NONCE_LENGTH = 18;

/** What Postgres stores in pg_authid for a SCRAM password: the client's password never leaves it. */
export interface ScramSecret {
  iterations: number;
  salt: Uint8Array;
  storedKey: Uint8Array;
  serverKey: Uint8Array;
}

/** A SCRAM failure, worded as Postgres words it; the exchange ends with it as a FATAL. */
export class ScramError extends Error {
  constructor(readonly fields: ErrorFields) {
    super(fields.message);
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const subtle = globalThis.crypto.subtle;

/**
 * The secret for `password`, derived once (PBKDF2 with `iterations` rounds costs milliseconds).
 *
 * @example
 * const secret = await scramSecret("postgres");
 */
export async function scramSecret(password: string, salt = randomBytes(SALT_LENGTH), iterations = SCRAM_ITERATIONS): Promise<ScramSecret> {
  const key = await subtle.importKey("raw", bytes(encoder.encode(password)), "PBKDF2", false, ["deriveBits"]);
  const salted = new Uint8Array(await subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt: bytes(salt), iterations }, key, 256));
  const clientKey = await hmac(salted, "Client Key");
  return { iterations, salt, storedKey: await sha256(clientKey), serverKey: await hmac(salted, "Server Key") };
}

/** The first SASL message's fields (SASLInitialResponse): the mechanism chosen and the initial response, if any. */
export function parseSaslInitialResponse(body: Uint8Array): { mechanism: string; response: Uint8Array | null } {
  const end = body.indexOf(0);
  if (end < 0) throw protocolViolation("invalid string in message");
  const mechanism = decoder.decode(body.subarray(0, end));
  if (body.length < end + 5) throw protocolViolation("insufficient data left in message");
  const length = new DataView(body.buffer, body.byteOffset + end + 1, 4).getInt32(0);
  const rest = body.subarray(end + 5);
  if (length === -1) {
    if (rest.length > 0) throw protocolViolation("invalid message format");
    return { mechanism, response: null };
  }
  if (length < 0 || length > rest.length) throw protocolViolation("insufficient data left in message");
  if (length < rest.length) throw protocolViolation("invalid message format");
  return { mechanism, response: rest };
}

export interface ScramExchangeOptions {
  /** The startup packet's user name, for the failure's message and the mock salt. */
  user: string;
  /** The user's secret; undefined runs a doomed exchange that fails as a wrong password does. */
  secret: ScramSecret | undefined;
  /** Keys the mock salt of users without a secret: one per process, so a user's mock salt never changes while it runs. */
  mockNonce: Uint8Array;
  /** The server nonce as sent: 18 random bytes in base64 unless a test fixes it (RFC 7677's example). */
  serverNonce?: string;
}

/** What to send after a client message: a challenge to continue with, or the final message on success. */
export type ScramStep = { continue: string } | { final: string };

/**
 * One connection's exchange: `step` takes each SASL payload the client sends (null for a
 * SASLInitialResponse without one) and says what to answer; it throws `ScramError` on a malformed
 * message, and on a wrong password with Postgres' own 28P01.
 *
 * @example
 * const exchange = scramExchange({ user: "postgres", secret, mockNonce });
 * const first = await exchange.step(initialResponse); // { continue: "r=...,s=...,i=4096" }
 */
export function scramExchange(options: ScramExchangeOptions) {
  let state: "init" | "salt-sent" = "init";
  let cbindFlag = "";
  let clientFirstBare = "";
  let clientNonce = "";
  let serverNonce = "";
  let serverFirst = "";
  let secretFor: Promise<{ secret: ScramSecret; doomed: boolean }> | undefined;

  const resolveSecret = async () => {
    if (options.secret) return { secret: options.secret, doomed: false };
    const salt = (await sha256(concat(encoder.encode(options.user), options.mockNonce))).slice(0, SALT_LENGTH);
    const zero = new Uint8Array(32);
    return { secret: { iterations: SCRAM_ITERATIONS, salt, storedKey: zero, serverKey: zero }, doomed: true };
  };

  return {
    async step(input: Uint8Array | null): Promise<ScramStep> {
      secretFor ??= resolveSecret();
      // A SASLInitialResponse without a response: an empty challenge, answered by the client-first-message.
      if (input === null) return { continue: "" };
      if (input.length === 0) throw protocolViolation("malformed SCRAM message", "The message is empty.");
      if (input.includes(0)) throw protocolViolation("malformed SCRAM message", "Message length does not match input length.");
      const text = decoder.decode(input);
      if (state === "init") {
        ({ cbindFlag, clientFirstBare, clientNonce } = readClientFirst(text));
        const { secret } = await secretFor;
        serverNonce = options.serverNonce ?? base64(randomBytes(RAW_NONCE_LENGTH));
        serverFirst = `r=${clientNonce}${serverNonce},s=${base64(secret.salt)},i=${secret.iterations}`;
        state = "salt-sent";
        return { continue: serverFirst };
      }
      const final = readClientFinal(text, cbindFlag);
      if (!equalInTime(encoder.encode(final.nonce), encoder.encode(clientNonce + serverNonce))) {
        throw protocolViolation("invalid SCRAM response", "Nonce does not match.");
      }
      const { secret, doomed } = await secretFor;
      const authMessage = encoder.encode(`${clientFirstBare},${serverFirst},${final.withoutProof}`);
      // The proof is checked even when doomed, so a missing user takes the time a wrong password takes.
      const clientSignature = await hmac(secret.storedKey, authMessage);
      const clientKey = final.proof.map((byte, index) => byte ^ clientSignature[index]);
      const proven = equalInTime(await sha256(clientKey), secret.storedKey);
      if (!proven || doomed) {
        throw new ScramError({ severity: "FATAL", code: "28P01", message: `password authentication failed for user "${options.user}"` });
      }
      return { final: `v=${base64(await hmac(secret.serverKey, authMessage))}` };
    },
  };
}

/** The client-first-message: gs2 header, then the bare part whose nonce the server extends. */
function readClientFirst(text: string) {
  const cbindFlag = text[0];
  let rest: string;
  if (cbindFlag === "n" || cbindFlag === "y") {
    if (text[1] !== ",") throw protocolViolation("malformed SCRAM message", `Comma expected, but found character "${sanitizeChar(text[1])}".`);
    rest = text.slice(2);
  } else if (cbindFlag === "p") {
    throw protocolViolation(
      "malformed SCRAM message",
      "The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data.",
    );
  } else {
    throw protocolViolation("malformed SCRAM message", `Unexpected channel-binding flag "${sanitizeChar(cbindFlag)}".`);
  }
  if (rest[0] === "a") throw new ScramError({ severity: "FATAL", code: "0A000", message: "client uses authorization identity, but it is not supported" });
  if (rest[0] !== ",") throw protocolViolation("malformed SCRAM message", `Unexpected attribute "${sanitizeChar(rest[0])}" in client-first-message.`);
  const clientFirstBare = rest.slice(1);
  if (clientFirstBare[0] === "m") throw new ScramError({ severity: "FATAL", code: "0A000", message: "client requires an unsupported SCRAM extension" });
  const attributes = new Attributes(clientFirstBare);
  attributes.expect("n");
  const clientNonce = attributes.expect("r");
  if (!/^[\x21-\x2b\x2d-\x7e]*$/.test(clientNonce)) throw protocolViolation("non-printable characters in SCRAM nonce");
  while (!attributes.done) attributes.any();
  return { cbindFlag, clientFirstBare, clientNonce };
}

/** The client-final-message: the channel binding echoed, the whole nonce, then the proof last. */
function readClientFinal(text: string, cbindFlag: string) {
  const attributes = new Attributes(text);
  const binding = attributes.expect("c");
  if (!((binding === "biws" && cbindFlag === "n") || (binding === "eSws" && cbindFlag === "y"))) {
    throw protocolViolation("unexpected SCRAM channel-binding attribute in client-final-message");
  }
  const nonce = attributes.expect("r");
  let proofAt: number;
  let attribute: { name: string; value: string };
  do {
    proofAt = attributes.position - 1;
    attribute = attributes.any();
  } while (attribute.name !== "p");
  const proof = fromBase64(attribute.value);
  if (proof?.length !== 32) throw protocolViolation("malformed SCRAM message", "Malformed proof in client-final-message.");
  if (!attributes.done) throw protocolViolation("malformed SCRAM message", "Garbage found at the end of client-final-message.");
  return { nonce, proof, withoutProof: text.slice(0, proofAt) };
}

/** A SCRAM message's comma-separated `x=value` attributes, read in order as auth-scram.c reads them. */
class Attributes {
  position = 0;
  constructor(private readonly text: string) {}

  get done(): boolean {
    return this.position >= this.text.length;
  }

  /** The value of the attribute `name`, which must come next. */
  expect(name: string): string {
    const found = this.text[this.position];
    if (found !== name) {
      throw protocolViolation("malformed SCRAM message", `Expected attribute "${name}" but found "${sanitizeChar(found)}".`);
    }
    return this.any().value;
  }

  /** The next attribute, whichever it is. */
  any(): { name: string; value: string } {
    const name = this.text[this.position];
    if (name === undefined) throw protocolViolation("malformed SCRAM message", "Attribute expected, but found end of string.");
    if (!/^[A-Za-z]$/.test(name)) {
      throw protocolViolation("malformed SCRAM message", `Attribute expected, but found invalid character "${sanitizeChar(name)}".`);
    }
    if (this.text[this.position + 1] !== "=") throw protocolViolation("malformed SCRAM message", `Expected character "=" for attribute "${name}".`);
    const start = this.position + 2;
    const comma = this.text.indexOf(",", start);
    const end = comma < 0 ? this.text.length : comma;
    this.position = comma < 0 ? end : end + 1;
    return { name, value: this.text.slice(start, end) };
  }
}

function protocolViolation(message: string, detail?: string): ScramError {
  return new ScramError({ severity: "FATAL", code: "08P01", message, ...(detail && { detail }) });
}

/** A character from the client, as Postgres shows it in an error: quoted when printable ASCII, else in hex. */
function sanitizeChar(char: string | undefined): string {
  if (char === undefined) return "0x00";
  const code = char.charCodeAt(0);
  return code >= 0x21 && code <= 0x7e ? `'${char}'` : `0x${(code & 0xff).toString(16).padStart(2, "0")}`;
}

/** Whether two byte strings (secrets, keys) are equal, in a time that depends on their lengths only. */
export function equalInTime(a: Uint8Array, b: Uint8Array): boolean {
  let difference = a.length ^ b.length;
  for (let index = 0; index < Math.max(a.length, b.length); index++) difference |= (a[index] ?? 0) ^ (b[index] ?? 0);
  return difference === 0;
}

async function hmac(key: Uint8Array, message: Uint8Array | string): Promise<Uint8Array> {
  const imported = await subtle.importKey("raw", bytes(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const data = typeof message === "string" ? encoder.encode(message) : message;
  return new Uint8Array(await subtle.sign("HMAC", imported, bytes(data)));
}

async function sha256(data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await subtle.digest("SHA-256", bytes(data)));
}

/** `data` on an ArrayBuffer of its own, as Web Crypto's typings want it. */
function bytes(data: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(data);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}

function randomBytes(count: number): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(count));
}

function base64(data: Uint8Array): string {
  return btoa(String.fromCharCode(...data));
}

/** Strict base64 (padding required, as Postgres' pg_b64_decode wants it), or undefined. */
function fromBase64(text: string): Uint8Array | undefined {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}
