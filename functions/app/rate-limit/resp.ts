import { Buffer } from "node:buffer";

/** An error reply (`-ERR ...`): Redis ran the command and refused it. */
export class RedisReplyError extends Error {
  override name = "RedisReplyError";
}

/** A RESP2 reply: simple and bulk strings, integers, nil, errors (inside arrays) and arrays. */
export type RespValue = string | number | null | RedisReplyError | RespValue[];

const encoder = new TextEncoder();

/**
 * One command as RESP2 writes it (an array of bulk strings), as the bytes of one socket write: a
 * client writing each part costs a write call a part. Lengths are in bytes. A command all ASCII
 * (IP addresses, numbers, the script) is framed and encoded once: there each character is a byte.
 */
export function encodeCommand(args: readonly string[]): Uint8Array {
  const command = frame(args, (arg) => arg.length);
  const bytes = encoder.encode(command);
  // Any other character takes more bytes in UTF-8 than UTF-16 units: frame again, by bytes.
  return bytes.length === command.length ? bytes : encoder.encode(frame(args, (arg) => encoder.encode(arg).length));
}

function frame(args: readonly string[], length: (arg: string) => number): string {
  let command = `*${args.length}\r\n`;
  for (const arg of args) command += `$${length(arg)}\r\n${arg}\r\n`;
  return command;
}

/** Bytes arrived short of a whole reply. */
const INCOMPLETE = Symbol("incomplete");

const CR = 0x0d;
const MINUS = 0x2d;

/**
 * Reads RESP2 replies out of a byte stream: `feed` takes each chunk as it arrives and hands every
 * whole reply to `onReply`, in order, keeping a partial one for the next chunk. Throws on bytes
 * that are not RESP2 (the connection is then beyond repair). Integers and lengths are read from
 * the bytes; only strings are decoded.
 *
 * @example
 * const feed = respReader((reply) => pending.shift()!.settle(reply));
 * socket.on("data", feed);
 */
export function respReader(onReply: (reply: RespValue) => void): (chunk: Buffer) => void {
  let buffer: Buffer = Buffer.alloc(0);
  let at = 0;

  /** Where the line from `at` ends (its CR), or -1 before its CR LF has arrived. */
  function lineEnd(): number {
    for (let end = at + 1; end + 1 < buffer.length; end += 1) if (buffer[end] === CR) return end;
    return -1;
  }

  /** The integer between `from` and `end`: `:42`, `$-1`, `*3`. */
  function integer(from: number, end: number): number {
    const negative = buffer[from] === MINUS;
    let value = 0;
    for (let i = negative ? from + 1 : from; i < end; i += 1) {
      const digit = buffer[i] - 0x30;
      if (digit < 0 || digit > 9) throw new Error("not a RESP2 reply: a malformed integer");
      value = value * 10 + digit;
    }
    return negative ? -value : value;
  }

  function value(): RespValue | typeof INCOMPLETE {
    const end = lineEnd();
    if (end === -1) return INCOMPLETE;
    const type = buffer[at];
    const from = at + 1;
    at = end + 2;
    switch (type) {
      case 0x2b: // +
        return buffer.toString("utf8", from, end);
      case 0x2d: // -
        return new RedisReplyError(buffer.toString("utf8", from, end));
      case 0x3a: // :
        return integer(from, end);
      case 0x24: { // $
        const length = integer(from, end);
        if (length === -1) return null;
        if (buffer.length < at + length + 2) return INCOMPLETE;
        const bulk = buffer.toString("utf8", at, at + length);
        at += length + 2;
        return bulk;
      }
      case 0x2a: { // *
        const count = integer(from, end);
        if (count === -1) return null;
        const items: RespValue[] = new Array(count);
        for (let i = 0; i < count; i += 1) {
          const item = value();
          if (item === INCOMPLETE) return INCOMPLETE;
          items[i] = item;
        }
        return items;
      }
      default:
        throw new Error(`not a RESP2 reply: type byte ${type}`);
    }
  }

  return function feed(chunk) {
    buffer = at === buffer.length ? chunk : Buffer.concat([buffer.subarray(at), chunk]);
    at = 0;
    while (at < buffer.length) {
      const start = at;
      const reply = value();
      if (reply === INCOMPLETE) {
        at = start;
        return;
      }
      onReply(reply);
    }
  };
}
