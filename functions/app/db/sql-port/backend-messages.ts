/**
 * The messages the SQL port writes itself, in Postgres' wire format (protocol 3, "Message Formats"
 * in the Postgres manual). Everything else a client reads comes from PGlite as PGlite wrote it.
 */

const encoder = new TextEncoder();

/** A backend message: its type byte, then its length (itself included), then `body`. */
export function backendMessage(type: string, body: Uint8Array = new Uint8Array(0)): Uint8Array {
  const message = new Uint8Array(5 + body.length);
  message[0] = type.charCodeAt(0);
  new DataView(message.buffer).setInt32(1, 4 + body.length);
  message.set(body, 5);
  return message;
}

/** Big-endian 32-bit integers, as every length and code on the wire. */
export function int32s(...values: number[]): Uint8Array {
  const bytes = new Uint8Array(4 * values.length);
  const view = new DataView(bytes.buffer);
  values.forEach((value, index) => view.setInt32(4 * index, value));
  return bytes;
}

/** `parts` one after the other. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}

/** A C string: UTF-8 and a terminating zero. */
export function cString(text: string): Uint8Array {
  return concatBytes(encoder.encode(text), new Uint8Array(1));
}

export type Severity = "ERROR" | "FATAL";

/** What an ErrorResponse says: SQLSTATE, message and the optional detail and hint, as Postgres words them. */
export interface ErrorFields {
  severity: Severity;
  code: string;
  message: string;
  detail?: string;
  hint?: string;
}

/**
 * An ErrorResponse ('E'). A FATAL one is the last thing a client reads before the port closes the
 * connection; psql prints it as it prints Postgres' own.
 *
 * @example
 * errorResponse({ severity: "FATAL", code: "28P01", message: 'password authentication failed for user "postgres"' });
 */
export function errorResponse(fields: ErrorFields): Uint8Array {
  const parts = [
    ["S", fields.severity],
    ["V", fields.severity],
    ["C", fields.code],
    ["M", fields.message],
    ...(fields.detail ? [["D", fields.detail]] : []),
    ...(fields.hint ? [["H", fields.hint]] : []),
  ];
  return backendMessage("E", concatBytes(...parts.map(([field, value]) => cString(field + value)), new Uint8Array(1)));
}

/** The authentication requests ('R') the port sends: which one is its first 32-bit field. */
const AUTHENTICATION_SASL = 10;
const AUTHENTICATION_SASL_CONTINUE = 11;
const AUTHENTICATION_SASL_FINAL = 12;

/** AuthenticationSASL: the mechanisms offered, each a C string, then an empty one. */
export function authenticationSasl(mechanisms: string[]): Uint8Array {
  return backendMessage("R", concatBytes(int32s(AUTHENTICATION_SASL), ...mechanisms.map(cString), new Uint8Array(1)));
}

/** AuthenticationSASLContinue: the server-first-message of SCRAM. */
export function authenticationSaslContinue(data: string): Uint8Array {
  return backendMessage("R", concatBytes(int32s(AUTHENTICATION_SASL_CONTINUE), encoder.encode(data)));
}

/** AuthenticationSASLFinal: the server-final-message of SCRAM (its signature, which the client checks). */
export function authenticationSaslFinal(data: string): Uint8Array {
  return backendMessage("R", concatBytes(int32s(AUTHENTICATION_SASL_FINAL), encoder.encode(data)));
}

/** BackendKeyData: the process id and secret a CancelRequest must name. */
export function backendKeyData(processId: number, secret: Uint8Array): Uint8Array {
  return backendMessage("K", concatBytes(int32s(processId), secret));
}

/** NegotiateProtocolVersion: the newest minor version served, and the `_pq_.` options not understood. */
export function negotiateProtocolVersion(version: number, unrecognized: string[]): Uint8Array {
  return backendMessage("v", concatBytes(int32s(version, unrecognized.length), ...unrecognized.map(cString)));
}

/** The transaction status a ReadyForQuery reports. */
export type TransactionStatus = "I" | "T" | "E";

/** ReadyForQuery ('Z'). */
export function readyForQuery(status: TransactionStatus): Uint8Array {
  return backendMessage("Z", encoder.encode(status));
}

/** CopyInResponse ('G'): the overall format (0 text, 1 binary) and each column's. */
export function copyInResponse(binary: boolean, columns: number): Uint8Array {
  const body = new Uint8Array(3 + 2 * columns);
  const view = new DataView(body.buffer);
  body[0] = binary ? 1 : 0;
  view.setInt16(1, columns);
  for (let column = 0; column < columns; column++) view.setInt16(3 + 2 * column, binary ? 1 : 0);
  return backendMessage("G", body);
}

/**
 * Splits a stream of backend messages into whole messages, for the few the port reads or replaces
 * in what PGlite wrote (its BackendKeyData, the CopyInResponse the port already sent).
 */
export function splitMessages(bytes: Uint8Array): { messages: Uint8Array[]; rest: Uint8Array } {
  const messages: Uint8Array[] = [];
  let offset = 0;
  while (bytes.length - offset >= 5) {
    const length = 1 + new DataView(bytes.buffer, bytes.byteOffset + offset + 1, 4).getInt32(0);
    if (bytes.length - offset < length) break;
    messages.push(bytes.subarray(offset, offset + length));
    offset += length;
  }
  return { messages, rest: bytes.subarray(offset) };
}
