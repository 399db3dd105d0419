import { Buffer } from "node:buffer";

/** An error reply (`-ERR ...`): Redis ran the command and refused it. */
export class RedisReplyError extends Error {
  override name = "RedisReplyError";
}

/** A RESP2 reply: simple and bulk strings, integers, nil, errors (inside arrays) and arrays. */
export type RespValue = string | number | null | RedisReplyError | RespValue[];

/**
 * One command as RESP2 writes it (an array of bulk strings), in one string: the connection sends
 * a command in one socket write, where a client writing each part costs a write call a part.
 */
export function encodeCommand(args: readonly string[]): string {
  let command = `*${args.length}\r\n`;
  for (const arg of args) command += `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`;
  return command;
}

/** Bytes arrived short of a whole reply. */
const INCOMPLETE = Symbol("incomplete");

/**
 * Reads RESP2 replies out of a byte stream: `feed` takes each chunk as it arrives and hands every
 * whole reply to `onReply`, in order, keeping a partial one for the next chunk. Throws on bytes
 * that are not RESP2 (the connection is then beyond repair).
 *
 * @example
 * const feed = respReader((reply) => pending.shift()!.settle(reply));
 * socket.on("data", feed);
 */
export function respReader(onReply: (reply: RespValue) => void): (chunk: Buffer) => void {
  let buffer: Buffer = Buffer.alloc(0);
  let at = 0;

  function line(): { type: number; text: string } | typeof INCOMPLETE {
    const end = buffer.indexOf("\r\n", at);
    if (end === -1) return INCOMPLETE;
    const type = buffer[at];
    const text = buffer.toString("utf8", at + 1, end);
    at = end + 2;
    return { type, text };
  }

  function value(): RespValue | typeof INCOMPLETE {
    const header = line();
    if (header === INCOMPLETE) return INCOMPLETE;
    const { type, text } = header;
    switch (type) {
      case 0x2b: // +
        return text;
      case 0x2d: // -
        return new RedisReplyError(text);
      case 0x3a: // :
        return Number(text);
      case 0x24: { // $
        const length = Number(text);
        if (length === -1) return null;
        if (buffer.length < at + length + 2) return INCOMPLETE;
        const bulk = buffer.toString("utf8", at, at + length);
        at += length + 2;
        return bulk;
      }
      case 0x2a: { // *
        const count = Number(text);
        if (count === -1) return null;
        const items: RespValue[] = [];
        for (let i = 0; i < count; i += 1) {
          const item = value();
          if (item === INCOMPLETE) return INCOMPLETE;
          items.push(item);
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
