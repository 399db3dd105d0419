import { createHash, createHmac, pbkdf2Sync, randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";

/**
 * A bare Postgres frontend over TCP, for tests that must send what no driver sends: packets of
 * any declared length, messages of any type, SCRAM messages out of order. Its SCRAM client is
 * written from RFC 5802 with node:crypto, apart from the server's (db/sql-port/scram.ts).
 */
export class WireClient {
  readonly socket: Socket;
  received = Buffer.alloc(0);
  closed = false;
  readonly ended: Promise<void>;
  #waiters: Array<() => void> = [];

  constructor(port: number) {
    this.socket = connect(port, "127.0.0.1");
    this.socket.on("data", (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.#wake();
    });
    this.socket.on("error", () => {});
    this.ended = new Promise((resolve) => {
      this.socket.on("close", () => {
        this.closed = true;
        this.#wake();
        resolve();
      });
    });
  }

  #wake() {
    for (const waiter of this.#waiters.splice(0)) waiter();
  }

  send(bytes: Uint8Array): void {
    if (!this.socket.destroyed) this.socket.write(bytes);
  }

  /** Resolves once `condition` holds of what was received (or the server closed); the test's timeout bounds the wait. */
  async until(condition: (client: WireClient) => boolean): Promise<void> {
    while (!condition(this) && !this.closed) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  /** The next whole backend message, removed from what was received; undefined if the server closed first. */
  async message(): Promise<{ type: string; body: Buffer } | undefined> {
    await this.until((client) => client.received.length >= 5 && client.received.length >= 1 + client.received.readInt32BE(1));
    if (this.received.length < 5 || this.received.length < 1 + this.received.readInt32BE(1)) return undefined;
    const length = 1 + this.received.readInt32BE(1);
    const message = { type: String.fromCharCode(this.received[0]), body: this.received.subarray(5, length) };
    this.received = this.received.subarray(length);
    return message;
  }

  /** Messages up to and including the next of `type` (or until the server closes). */
  async through(type: string): Promise<Array<{ type: string; body: Buffer }>> {
    const messages: Array<{ type: string; body: Buffer }> = [];
    for (;;) {
      const message = await this.message();
      if (!message) return messages;
      messages.push(message);
      if (message.type === type) return messages;
    }
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Big-endian 32-bit integers. */
export function int32s(...values: number[]): Buffer {
  const bytes = Buffer.alloc(4 * values.length);
  values.forEach((value, index) => bytes.writeInt32BE(value | 0, 4 * index));
  return bytes;
}

/** A frontend message: type, declared length (its true one unless given), body. */
export function message(type: string, body: Uint8Array = Buffer.alloc(0), declared = 4 + body.length): Buffer {
  return Buffer.concat([Buffer.from(type, "latin1"), int32s(declared), body]);
}

/** A startup packet for protocol `version` with `params`. */
export function startupPacket(params: Record<string, string>, version = 3 << 16): Buffer {
  const body = Buffer.from(Object.entries(params).map(([name, value]) => `${name}\0${value}\0`).join("") + "\0");
  return Buffer.concat([int32s(8 + body.length, version), body]);
}

/** A simple Query message. */
export function query(sql: string): Buffer {
  return message("Q", Buffer.from(`${sql}\0`));
}

/** The text of an ErrorResponse's field (M message, C code, S severity). */
export function errorField(body: Buffer, field: string): string | undefined {
  for (const part of body.toString("utf8").split("\0")) if (part[0] === field) return part.slice(1);
  return undefined;
}

/**
 * A connection authenticated as `user` with `password` by SCRAM-SHA-256, ready for queries
 * (its ReadyForQuery read), and its BackendKeyData; throws with the server's error if refused.
 *
 * @example
 * const { client } = await authenticated(port, "postgres", "postgres");
 */
export async function authenticated(
  port: number,
  user: string,
  password: string,
): Promise<{ client: WireClient; processId: number; secret: Buffer }> {
  const client = new WireClient(port);
  client.send(startupPacket({ user, database: "postgres" }));
  const sasl = await client.message();
  if (sasl?.type !== "R" || sasl.body.readInt32BE(0) !== 10) throw new Error(`expected AuthenticationSASL, got ${describe(sasl)}`);
  const clientNonce = randomBytes(18).toString("base64");
  const clientFirstBare = `n=,r=${clientNonce}`;
  const initial = Buffer.from(`n,,${clientFirstBare}`);
  client.send(message("p", Buffer.concat([Buffer.from("SCRAM-SHA-256\0"), int32s(initial.length), initial])));
  const challenge = await client.message();
  if (challenge?.type !== "R" || challenge.body.readInt32BE(0) !== 11) throw new Error(`expected SASLContinue, got ${describe(challenge)}`);
  const serverFirst = challenge.body.subarray(4).toString();
  const fields = Object.fromEntries(serverFirst.split(",").map((part) => [part[0], part.slice(2)]));
  const salted = pbkdf2Sync(password, Buffer.from(fields.s, "base64"), Number(fields.i), 32, "sha256");
  const clientKey = createHmac("sha256", salted).update("Client Key").digest();
  const storedKey = createHash("sha256").update(clientKey).digest();
  const withoutProof = `c=biws,r=${fields.r}`;
  const authMessage = `${clientFirstBare},${serverFirst},${withoutProof}`;
  const signature = createHmac("sha256", storedKey).update(authMessage).digest();
  const proof = Buffer.from(clientKey.map((byte, index) => byte ^ signature[index]));
  client.send(message("p", Buffer.from(`${withoutProof},p=${proof.toString("base64")}`)));
  let key = { processId: 0, secret: Buffer.alloc(0) };
  for (const answer of await client.through("Z")) {
    if (answer.type === "E") throw new Error(errorField(answer.body, "M"));
    if (answer.type === "R" && answer.body.readInt32BE(0) === 12) {
      const serverKey = createHmac("sha256", salted).update("Server Key").digest();
      const expected = createHmac("sha256", serverKey).update(authMessage).digest("base64");
      if (answer.body.subarray(4).toString() !== `v=${expected}`) throw new Error("the server's SCRAM signature is wrong");
    }
    if (answer.type === "K") key = { processId: answer.body.readInt32BE(0), secret: Buffer.from(answer.body.subarray(4)) };
  }
  if (client.closed) throw new Error("the server closed the connection during authentication");
  return { client, ...key };
}

function describe(answer: { type: string; body: Buffer } | undefined): string {
  if (!answer) return "a closed connection";
  return answer.type === "E" ? `error ${errorField(answer.body, "C")} ${errorField(answer.body, "M")}` : `message ${answer.type}`;
}
