import { Buffer } from "node:buffer";
import { connect as connectTcp, type Socket } from "node:net";
import { connect as connectTls } from "node:tls";
import type { Logger } from "../log.ts";
import { encodeCommand, RedisReplyError, respReader, type RespValue } from "./resp.ts";

/** What the limiter needs of a Redis connection: one command, its reply. */
export interface CommandSender {
  sendCommand(args: string[]): Promise<unknown>;
}

export interface RedisConnectionOptions {
  /** A command not answered in this time fails, and the connection is replaced: the server is stalled. */
  commandTimeoutMs: number;
  /** How long start-up waits for the first connection before serving without it. */
  connectWaitMs: number;
  log: Logger;
}

export interface RedisConnection {
  client: CommandSender;
  /** Closes the connection at once; any command still waiting is rejected. */
  close(): void;
}

/** A command that could not be sent or answered: the store is unreachable, not refusing. */
export class RedisUnavailable extends Error {
  override name = "RedisUnavailable";
  /** Why, as a socket error code: ECONNREFUSED, ETIMEDOUT (no answer in time), ENOTCONN, ... */
  readonly code: string;
  constructor(code: string) {
    super(`Redis unavailable: ${code}`);
    this.code = code;
  }
}

/** More commands than this waiting on a stalled server are refused at once rather than queued. */
const MAX_QUEUED_COMMANDS = 10_000;
/** Reconnection waits double from the first to the last, while the server stays away. */
const RECONNECT_FIRST_MS = 100;
const RECONNECT_MOST_MS = 2_000;

interface Waiting {
  resolve(reply: unknown): void;
  reject(error: Error): void;
  sentAt: number;
}

/**
 * One RESP2 connection to a plain Redis (`redis://` or `rediss://`, with the URL's user, password
 * and database), for the rate limiter's few commands. Written here rather than taken from
 * node-redis: node-redis writes commands as strings, and Deno's node:net encodes a string write
 * at a cost (29% of the limiter's time in a profile, a quarter of its CPU per check); this writes
 * each command as one byte array.
 *
 * It reconnects by itself, and while it is down commands fail at once instead of queueing: a
 * request then gets its rule's fail mode without waiting, and a backlog of stale checks is never
 * replayed on reconnect. A command unanswered within `commandTimeoutMs` fails and the connection
 * is replaced. A server that is down at start-up does not stop the app from starting.
 *
 * @example
 * const { client, close } = await openRedisConnection(url, { commandTimeoutMs: 500, connectWaitMs: 1000, log });
 */
export async function openRedisConnection(url: string, options: RedisConnectionOptions): Promise<RedisConnection> {
  const { log, commandTimeoutMs } = options;
  const target = new URL(url);
  const handshake: string[][] = [];
  if (target.password) {
    const password = decodeURIComponent(target.password);
    handshake.push(target.username ? ["AUTH", decodeURIComponent(target.username), password] : ["AUTH", password]);
  }
  const database = target.pathname.slice(1);
  if (database) handshake.push(["SELECT", database]);

  let socket: Socket | undefined;
  let ready = false;
  let closed = false;
  let everReady = false;
  let reconnectMs = RECONNECT_FIRST_MS;
  let reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  /** Commands sent and not yet answered, oldest first: Redis answers in order. */
  const waiting: Waiting[] = [];
  /** Set for the oldest command's deadline while any waits: one timer, not one a command. */
  let watchdog: ReturnType<typeof setTimeout> | undefined;
  let onReady: (() => void) | undefined;

  function failAll(reason: string) {
    clearTimeout(watchdog);
    watchdog = undefined;
    for (const command of waiting.splice(0)) command.reject(new RedisUnavailable(reason));
  }

  function send(on: Socket, args: readonly string[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      waiting.push({ resolve, reject, sentAt: performance.now() });
      watchdog ??= setTimeout(watch, commandTimeoutMs);
      on.write(encodeCommand(args));
    });
  }

  /** Drops the connection when its oldest command is past its time; else waits for that time. */
  function watch() {
    watchdog = undefined;
    if (waiting.length === 0 || !socket) return;
    const waited = performance.now() - waiting[0].sentAt;
    if (waited >= commandTimeoutMs) return drop(socket, "ETIMEDOUT");
    watchdog = setTimeout(watch, commandTimeoutMs - waited);
  }

  /** Ends `lost` (if it is still the connection) and reconnects later. */
  function drop(lost: Socket, reason: string) {
    if (lost !== socket) return;
    socket = undefined;
    lost.destroy();
    if (ready) {
      ready = false;
      // Logged on change only: the connection retries every few hundred milliseconds while the server is down.
      log("warn", "redis_connection_lost", { reason });
    }
    failAll(reason);
    if (closed) return;
    reconnectTimer = setTimeout(open, reconnectMs);
    reconnectMs = Math.min(reconnectMs * 2, RECONNECT_MOST_MS);
  }

  function open() {
    const port = Number(target.port || 6379);
    const host = target.hostname.replace(/^\[|\]$/g, "");
    const opened: Socket = target.protocol === "rediss:"
      ? connectTls({ host, port, servername: host })
      : connectTcp({ host, port });
    socket = opened;
    opened.setNoDelay(true);
    const feed = respReader((reply: RespValue) => {
      const command = waiting.shift();
      if (!command) return drop(opened, "EPROTO");
      if (reply instanceof RedisReplyError) command.reject(reply);
      else command.resolve(reply);
    });
    opened.on("data", (chunk: Buffer) => {
      try {
        feed(chunk);
      } catch {
        drop(opened, "EPROTO");
      }
    });
    opened.on("error", (error: Error & { code?: string }) => drop(opened, error.code ?? error.name));
    opened.on("close", () => drop(opened, "ECONNRESET"));
    opened.once(target.protocol === "rediss:" ? "secureConnect" : "connect", async () => {
      try {
        for (const command of handshake) await send(opened, command);
      } catch (error) {
        // A wrong password is no outage to wait out quietly: say so, without the password.
        if (error instanceof RedisReplyError) log("error", "redis_handshake_refused", { reason: error.message.split(" ")[0] });
        return drop(opened, "EHANDSHAKE");
      }
      if (opened !== socket) return;
      ready = true;
      everReady = true;
      reconnectMs = RECONNECT_FIRST_MS;
      log("info", "redis_connected", {});
      onReady?.();
    });
  }

  const connected = new Promise<void>((resolve) => (onReady = resolve));
  open();
  let waitTimer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<void>((resolve) => (waitTimer = setTimeout(resolve, options.connectWaitMs)));
  await Promise.race([connected, waited]);
  clearTimeout(waitTimer);
  if (!everReady) log("warn", "redis_unreachable", { waitedMs: options.connectWaitMs });

  return {
    client: {
      sendCommand(args) {
        if (!ready) return Promise.reject(new RedisUnavailable("ENOTCONN"));
        if (waiting.length >= MAX_QUEUED_COMMANDS) return Promise.reject(new RedisUnavailable("ENOBUFS"));
        return send(socket!, args);
      },
    },
    close() {
      closed = true;
      ready = false;
      clearTimeout(reconnectTimer);
      if (socket) drop(socket, "closed");
    },
  };
}
