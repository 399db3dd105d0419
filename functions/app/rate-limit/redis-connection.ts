import { createClient } from "redis";
import type { Logger } from "../log.ts";
import type { CommandSender } from "./redis-requester.ts";

export interface RedisConnectionOptions {
  /** Commands not answered in this time are dropped, as the request waiting for them has moved on. */
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

/** More commands than this waiting on a stalled server are refused at once rather than queued. */
const MAX_QUEUED_COMMANDS = 10_000;

/**
 * One node-redis connection for the rate limiter. It reconnects by itself, and while it is down
 * commands fail at once (`disableOfflineQueue`) instead of queueing: a request then gets its
 * rule's fail mode without waiting, and a backlog of stale checks is never replayed on reconnect.
 * A server that is down at start-up does not stop the app from starting.
 *
 * @example
 * const { client, close } = await openRedisConnection(url, { commandTimeoutMs: 500, connectWaitMs: 1000, log });
 */
export async function openRedisConnection(url: string, options: RedisConnectionOptions): Promise<RedisConnection> {
  const { log } = options;
  const client = createClient({
    url,
    // Upstash's REST API answers in RESP2's shapes (flat arrays for hashes, null for Lua's false);
    // node-redis speaks RESP3 unless told otherwise.
    RESP: 2,
    disableOfflineQueue: true,
    commandsQueueMaxLength: MAX_QUEUED_COMMANDS,
    commandOptions: { timeout: options.commandTimeoutMs },
  });
  // Logged on change only: the client retries every few hundred milliseconds while the server is down.
  let up = false;
  client.on("ready", () => {
    up = true;
    log("info", "redis_connected", {});
  });
  client.on("error", (error: unknown) => {
    if (!up) return;
    up = false;
    const code = (error as { code?: unknown } | null)?.code;
    log("warn", "redis_connection_lost", { reason: typeof code === "string" ? code : String(error) });
  });

  const connected = client.connect().then(
    () => true,
    () => false,
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), options.connectWaitMs)));
  if (!(await Promise.race([connected, waited]))) {
    log("warn", "redis_unreachable", { waitedMs: options.connectWaitMs });
  }
  clearTimeout(timer);
  return { client, close: () => client.destroy() };
}
