import type { ErrorFields } from "./backend-messages.ts";

/** The request codes a startup-phase packet may carry instead of a protocol version (pqcomm.h). */
const CANCEL_REQUEST_CODE = 80877102;
const SSL_REQUEST_CODE = 80877103;
const GSSENC_REQUEST_CODE = 80877104;

/** The newest protocol version served, as Postgres 18 (PGlite 0.5.16's) serves them: 3.0 to 3.2. */
const PROTOCOL_LATEST = protocol(3, 2);

/** Names longer than this are cut to it, as Postgres cuts user and database names (NAMEDATALEN - 1 bytes). */
const NAME_MAX_BYTES = 63;
/** A cancel key is 1 to 256 bytes (backend_startup.c, ProcessCancelRequestPacket). */
const MAX_CANCEL_KEY_LENGTH = 256;

function protocol(major: number, minor: number): number {
  return (major << 16) | minor;
}

/** What a startup-phase packet asks for. */
export type StartupRequest =
  | { kind: "ssl" }
  | { kind: "gssenc" }
  | { kind: "cancel"; processId: number; secret: Uint8Array }
  | {
    kind: "startup";
    /** The version the session speaks: the client's, or the latest served if the client's is newer. */
    version: number;
    user: string;
    database: string;
    /** NegotiateProtocolVersion is owed: the client asked a newer minor version or `_pq_.` options. */
    negotiate?: { version: number; unrecognized: string[] };
  }
  /** Refused: `fatal` is what Postgres tells the client (absent: it closes without a word); `reason` is for the log. */
  | { kind: "refused"; reason: string; fatal?: ErrorFields };

const decoder = new TextDecoder();

/**
 * Reads a startup-phase packet (without its length word) as Postgres 18's ProcessStartupPacket does:
 * the request codes (an SSL or GSSAPI encryption request is answered 'N' once each; a second one
 * counts as a protocol version, and an unsupported one), the protocol version, then the name/value
 * pairs, which must end with a terminator exactly at the packet's end.
 *
 * @example
 * parseStartupPacket(body, { sslDone: false, gssDone: false }); // { kind: "ssl" }
 */
export function parseStartupPacket(body: Uint8Array, done: { sslDone: boolean; gssDone: boolean }): StartupRequest {
  const view = new DataView(body.buffer, body.byteOffset, body.length);
  const code = view.getInt32(0) >>> 0;
  if (code === CANCEL_REQUEST_CODE) return cancelRequest(body);
  if (code === SSL_REQUEST_CODE && !done.sslDone) return { kind: "ssl" };
  if (code === GSSENC_REQUEST_CODE && !done.gssDone) return { kind: "gssenc" };
  const major = code >>> 16;
  const minor = code & 0xffff;
  if (major !== 3) {
    return {
      kind: "refused",
      reason: `unsupported frontend protocol ${major}.${minor}`,
      fatal: {
        severity: "FATAL",
        code: "0A000",
        message: `unsupported frontend protocol ${major}.${minor}: server supports 3.0 to 3.${PROTOCOL_LATEST & 0xffff}`,
      },
    };
  }
  const params = new Map<string, string>();
  const unrecognized: string[] = [];
  // Postgres reads the pairs from a copy with one zero byte appended, so a string that runs to the
  // packet's end is still terminated; the terminator check below then refuses the packet.
  const packet = new Uint8Array(body.length + 1);
  packet.set(body);
  const length = body.length;
  let offset = 4;
  while (offset < length) {
    const name = cStringAt(packet, offset);
    if (name.bytes === 0) break;
    const valueOffset = offset + name.bytes + 1;
    if (valueOffset >= length) break;
    const value = cStringAt(packet, valueOffset);
    if (name.text.startsWith("_pq_.")) unrecognized.push(name.text);
    else params.set(name.text, value.text);
    offset = valueOffset + value.bytes + 1;
  }
  if (offset !== length - 1) {
    return {
      kind: "refused",
      reason: "invalid startup packet layout",
      fatal: { severity: "FATAL", code: "08P01", message: "invalid startup packet layout: expected terminator as last byte" },
    };
  }
  const user = truncateName(params.get("user") ?? "");
  if (user === "") {
    return {
      kind: "refused",
      reason: "no user name",
      fatal: { severity: "FATAL", code: "28000", message: "no PostgreSQL user name specified in startup packet" },
    };
  }
  const version = Math.min(code, PROTOCOL_LATEST);
  const negotiate = minor > (PROTOCOL_LATEST & 0xffff) || unrecognized.length > 0 ? { version, unrecognized } : undefined;
  return { kind: "startup", version, user, database: truncateName(params.get("database") || user), ...(negotiate && { negotiate }) };
}

function cancelRequest(body: Uint8Array): StartupRequest {
  if (body.length < 8) return { kind: "refused", reason: "invalid length of cancel request packet" };
  const keyLength = body.length - 8;
  if (keyLength === 0 || keyLength > MAX_CANCEL_KEY_LENGTH) {
    return { kind: "refused", reason: "invalid length of cancel key in cancel request packet" };
  }
  return { kind: "cancel", processId: new DataView(body.buffer, body.byteOffset).getInt32(4), secret: body.slice(8) };
}

/** The zero-terminated string at `offset` (`packet` ends with a zero byte). */
function cStringAt(packet: Uint8Array, offset: number): { text: string; bytes: number } {
  const end = packet.indexOf(0, offset);
  return { text: decoder.decode(packet.subarray(offset, end)), bytes: end - offset };
}

/** A name cut to NAMEDATALEN - 1 bytes, as Postgres cuts it (never inside a character). */
function truncateName(name: string): string {
  const bytes = new TextEncoder().encode(name);
  if (bytes.length <= NAME_MAX_BYTES) return name;
  let end = NAME_MAX_BYTES;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return decoder.decode(bytes.subarray(0, end));
}

/** The cancel key's length for a session of `version`: 3.2 brought 32-byte keys, 3.0 has 4 bytes. */
export function cancelKeyLength(version: number): number {
  return version >= protocol(3, 2) ? 32 : 4;
}
