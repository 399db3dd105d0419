/**
 * Cutting a client's byte stream into Postgres protocol messages, with the bounds Postgres itself
 * puts on every declared length (src/include/libpq/libpq.h, pqcomm.c's pq_getmessage,
 * backend_startup.c's ProcessStartupPacket, postgres.c's SocketBackend). A length outside its
 * bound is never waited for: Postgres closes such a connection without a word, since the stream is
 * out of step, and so does the port. Bytes are kept as the chunks that arrived and joined once per
 * message, so a message that arrives in many chunks costs its size, not its size times the chunks.
 */

/** A startup packet (its length word included) is at most 10,000 bytes after its length word, and at least its code. */
export const MAX_STARTUP_PACKET_LENGTH = 10_000;
/** The most a message other than a query, a Parse, a Bind, a function call or copy data may declare. */
export const PQ_SMALL_MESSAGE_LIMIT = 10_000;
/** The most any message may declare: MaxAllocSize - 1. */
export const PQ_LARGE_MESSAGE_LIMIT = 0x3fffffff - 1;
/** A SASL message's limit (PG_MAX_SASL_MESSAGE_LENGTH). */
export const MAX_SASL_MESSAGE_LENGTH = 1024;

/** Each message type a phase accepts, with the most its declared length may be. */
export type MessageLimits = Readonly<Record<string, number>>;

/** After authentication (SocketBackend): the extended and simple protocols, function calls, copy data. */
export const SERVING_LIMITS: MessageLimits = {
  Q: PQ_LARGE_MESSAGE_LIMIT,
  F: PQ_LARGE_MESSAGE_LIMIT,
  X: PQ_SMALL_MESSAGE_LIMIT,
  B: PQ_LARGE_MESSAGE_LIMIT,
  P: PQ_LARGE_MESSAGE_LIMIT,
  C: PQ_SMALL_MESSAGE_LIMIT,
  D: PQ_SMALL_MESSAGE_LIMIT,
  E: PQ_SMALL_MESSAGE_LIMIT,
  H: PQ_SMALL_MESSAGE_LIMIT,
  S: PQ_SMALL_MESSAGE_LIMIT,
  d: PQ_LARGE_MESSAGE_LIMIT,
  c: PQ_SMALL_MESSAGE_LIMIT,
  f: PQ_SMALL_MESSAGE_LIMIT,
};

/** During COPY FROM STDIN (copyfromparse.c's CopyGetData): copy data, its end or failure, and what libpq may send unawares. */
export const COPY_IN_LIMITS: MessageLimits = {
  d: PQ_LARGE_MESSAGE_LIMIT,
  c: PQ_SMALL_MESSAGE_LIMIT,
  f: PQ_SMALL_MESSAGE_LIMIT,
  H: PQ_SMALL_MESSAGE_LIMIT,
  S: PQ_SMALL_MESSAGE_LIMIT,
};

/** During authentication (auth-sasl.c): only SASL responses. */
export const AUTHENTICATING_LIMITS: MessageLimits = { p: MAX_SASL_MESSAGE_LENGTH };

/** A message: its type byte and its body (without type and length). */
export interface Frame {
  type: string;
  body: Uint8Array;
}

/** What the next bytes are: a whole frame, not yet enough bytes, or a violation to answer by closing. */
export type FrameResult =
  | Frame
  | { incomplete: true }
  | { unexpectedType: number }
  | { invalidLength: string };

/**
 * The bytes a connection has sent and not yet consumed.
 *
 * @example
 * const queue = new ByteQueue();
 * queue.push(chunk);
 * const frame = queue.message(SERVING_LIMITS);
 */
export class ByteQueue {
  #chunks: Uint8Array[] = [];
  #offset = 0;
  #length = 0;

  /** How many bytes are waiting. */
  get length(): number {
    return this.#length;
  }

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#length += chunk.length;
  }

  /** The first `count` bytes, left in place (`count` <= length). */
  peek(count: number): Uint8Array {
    const first = this.#chunks[0];
    if (first && first.length - this.#offset >= count) return first.subarray(this.#offset, this.#offset + count);
    const bytes = new Uint8Array(count);
    let filled = 0;
    let offset = this.#offset;
    for (const chunk of this.#chunks) {
      const part = chunk.subarray(offset, offset + count - filled);
      bytes.set(part, filled);
      filled += part.length;
      offset = 0;
      if (filled === count) break;
    }
    return bytes;
  }

  /** Removes and returns the first `count` bytes (`count` <= length). */
  take(count: number): Uint8Array {
    const bytes = this.peek(count).slice();
    this.#length -= count;
    let left = count;
    while (left > 0) {
      const available = this.#chunks[0].length - this.#offset;
      if (available > left) {
        this.#offset += left;
        break;
      }
      left -= available;
      this.#chunks.shift();
      this.#offset = 0;
    }
    return bytes;
  }

  /**
   * A startup-phase packet (startup, SSLRequest, GSSENCRequest or CancelRequest): a length word
   * that counts itself, then the packet. Its body is returned without the length word.
   */
  startupPacket(): Uint8Array | { incomplete: true } | { invalidLength: string } {
    if (this.#length < 4) return { incomplete: true };
    const declared = int32(this.peek(4));
    if (declared - 4 < 4 || declared - 4 > MAX_STARTUP_PACKET_LENGTH) return { invalidLength: "invalid length of startup packet" };
    if (this.#length < declared) return { incomplete: true };
    return this.take(declared).subarray(4);
  }

  /** A typed message, checked against `limits` before its body is waited for, as SocketBackend checks it. */
  message(limits: MessageLimits): FrameResult {
    if (this.#length < 1) return { incomplete: true };
    const typeByte = this.peek(1)[0];
    const type = String.fromCharCode(typeByte);
    const limit = Object.hasOwn(limits, type) ? limits[type] : undefined;
    if (limit === undefined) return { unexpectedType: typeByte };
    if (this.#length < 5) return { incomplete: true };
    const declared = int32(this.peek(5).subarray(1));
    if (declared < 4 || declared > limit) return { invalidLength: "invalid message length" };
    if (this.#length < 1 + declared) return { incomplete: true };
    return { type, body: this.take(1 + declared).subarray(5) };
  }
}

function int32(bytes: Uint8Array): number {
  return new DataView(bytes.buffer, bytes.byteOffset, 4).getInt32(0);
}
