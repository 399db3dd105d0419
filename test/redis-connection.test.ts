import { Buffer } from "node:buffer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openRedisConnection, type RedisConnection, RedisUnavailable } from "../functions/app/rate-limit/redis-connection.ts";
import { encodeCommand, RedisReplyError, respReader, type RespValue } from "../functions/app/rate-limit/resp.ts";
import { memoryLogger } from "./support/app.ts";
import { freePort } from "./support/postgres-server.ts";
import { type RedisServer, redisServerAvailable, startRedis } from "./support/redis.ts";

const haveRedis = redisServerAvailable();

function readAll(bytes: Buffer, chunkSizes: (at: number) => number): RespValue[] {
  const replies: RespValue[] = [];
  const feed = respReader((reply) => replies.push(reply));
  for (let at = 0; at < bytes.length;) {
    const size = Math.max(1, chunkSizes(at));
    feed(bytes.subarray(at, at + size));
    at += size;
  }
  return replies;
}

describe("RESP2, as the rate limiter's Redis connection speaks it", () => {
  it("a command is one array of bulk strings, lengths in bytes", () => {
    const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    expect(decode(encodeCommand(["EVALSHA", "abc", "1", "k:1"]))).toBe("*4\r\n$7\r\nEVALSHA\r\n$3\r\nabc\r\n$1\r\n1\r\n$3\r\nk:1\r\n");
    expect(decode(encodeCommand(["SET", "k:é", "🎧", ""]))).toBe("*4\r\n$3\r\nSET\r\n$4\r\nk:é\r\n$4\r\n🎧\r\n$0\r\n\r\n");
  });

  it("reads every reply kind, whole or split at any byte", () => {
    const stream = Buffer.from(
      "+OK\r\n:42\r\n:-1234567\r\n+\r\n$-1\r\n$4\r\nhé!\r\n*-1\r\n-NOSCRIPT No matching script\r\n" +
        "*4\r\n:1\r\n$-1\r\n*2\r\n$1\r\nx\r\n-ERR inner\r\n$0\r\n\r\n",
    );
    const expected = [
      "OK", 42, -1234567, "", null, "hé!", null, new RedisReplyError("NOSCRIPT No matching script"),
      [1, null, ["x", new RedisReplyError("ERR inner")], ""],
    ];
    expect(readAll(stream, () => stream.length)).toEqual(expected);
    expect(readAll(stream, () => 1)).toEqual(expected);
    for (let size = 2; size < 12; size += 1) expect(readAll(stream, () => size)).toEqual(expected);
  });

  it("bytes that are not RESP2 are an error, not a reply", () => {
    expect(() => respReader(() => {})(Buffer.from("?what\r\n"))).toThrow(/not a RESP2 reply/);
    expect(() => respReader(() => {})(Buffer.from(":4x2\r\n"))).toThrow(/not a RESP2 reply/);
  });
});

/** PING every 50 ms until it answers PONG or `ms` pass; what it answered last. */
async function pingWithin(connection: RedisConnection, ms: number): Promise<unknown> {
  const deadline = performance.now() + ms;
  let answer: unknown;
  while (answer !== "PONG" && performance.now() < deadline) {
    answer = await connection.client.sendCommand(["PING"]).catch(() => undefined);
    if (answer !== "PONG") await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return answer;
}

describe.skipIf(!haveRedis)("the Redis connection (REDIS_URL)", () => {
  let secured: RedisServer;
  beforeAll(async () => {
    secured = await startRedis({ args: ["--requirepass", "s3cret"] });
  });
  afterAll(async () => {
    await secured.stop();
  });
  const options = { commandTimeoutMs: 500, connectWaitMs: 5_000 };

  it("authenticates and selects the database the URL names", async () => {
    const { log } = memoryLogger();
    const url = new URL(secured.url);
    url.password = "s3cret";
    url.pathname = "/3";
    const connection = await openRedisConnection(url.href, { ...options, log });
    try {
      await connection.client.sendCommand(["SET", "where", "db3"]);
      const info = String(await connection.client.sendCommand(["CLIENT", "INFO"]));
      expect(info).toMatch(/ db=3 /);
    } finally {
      connection.close();
    }
  });

  it("a wrong password is logged once as refused, never with the password, and commands fail at once", async () => {
    const { log, lines } = memoryLogger();
    const url = new URL(secured.url);
    url.password = "wrong-password";
    const connection = await openRedisConnection(url.href, { ...options, connectWaitMs: 300, log });
    try {
      await expect(connection.client.sendCommand(["PING"])).rejects.toBeInstanceOf(RedisUnavailable);
      const text = lines.join("\n");
      expect(text).toContain("redis_handshake_refused");
      expect(text).not.toContain("wrong-password");
    } finally {
      connection.close();
    }
  });

  it("reconnects by itself when the server comes back, and fails at once while it is away", async () => {
    const port = await freePort();
    let server = await startRedis({ port });
    const { log, lines } = memoryLogger();
    const connection = await openRedisConnection(server.url, { ...options, log });
    try {
      expect(await connection.client.sendCommand(["PING"])).toBe("PONG");
      await server.stop();
      const started = performance.now();
      await expect(connection.client.sendCommand(["PING"])).rejects.toBeInstanceOf(RedisUnavailable);
      expect(performance.now() - started).toBeLessThan(100);
      server = await startRedis({ port });
      expect(await pingWithin(connection, 5_000)).toBe("PONG");
      const events = lines.map((line) => JSON.parse(line).event);
      expect(events).toEqual(["redis_connected", "redis_connection_lost", "redis_connected"]);
    } finally {
      connection.close();
      await server.stop();
    }
  });

  it("a server that stops answering: the oldest command fails at its time, every other waiting one with it, the connection is replaced, and it answers again on resuming", async () => {
    const server = await startRedis();
    const { log, lines } = memoryLogger();
    const connection = await openRedisConnection(server.url, { ...options, log });
    try {
      expect(await connection.client.sendCommand(["PING"])).toBe("PONG");
      server.pause();
      const started = performance.now();
      const first = connection.client.sendCommand(["PING"]).catch((error: unknown) => ({ error, at: performance.now() - started }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const second = connection.client.sendCommand(["PING"]).catch((error: unknown) => ({ error, at: performance.now() - started }));
      const failures = (await Promise.all([first, second])) as Array<{ error: RedisUnavailable; at: number }>;
      // The oldest command's time runs out at 500 ms; the connection goes with it, and so does the second.
      for (const { error, at } of failures) {
        expect(error).toBeInstanceOf(RedisUnavailable);
        expect(error.code).toBe("ETIMEDOUT");
        expect(at).toBeGreaterThanOrEqual(options.commandTimeoutMs - 5);
        expect(at).toBeLessThan(options.commandTimeoutMs + 200);
      }
      server.resume();
      expect(await pingWithin(connection, 5_000)).toBe("PONG");
      const events = lines.map((line) => JSON.parse(line));
      expect(events.map((line) => line.event)).toEqual(["redis_connected", "redis_connection_lost", "redis_connected"]);
      expect(events[1].reason).toBe("ETIMEDOUT");
    } finally {
      connection.close();
      await server.stop();
    }
  });
});
