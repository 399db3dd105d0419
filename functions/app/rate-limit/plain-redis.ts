import { createHash } from "node:crypto";
import { Redis, type Requester, type UpstashRequest, type UpstashResponse } from "@upstash/redis";
import { createClient, ErrorReply } from "redis";
import type { Logger } from "../log.ts";

export interface PlainRedisOptions {
  /** A command not answered in this time fails (the store's bound; a stalled server must not hang a request). */
  commandTimeoutMs: number;
  /** How long start-up waits for the server before serving without it; it keeps reconnecting meanwhile. */
  connectWaitMs: number;
  log: Logger;
}

export interface PlainRedis {
  /** An @upstash/redis client whose commands run on the plain Redis: what @upstash/ratelimit takes. */
  redis: Redis;
  /** Its transport: one command in, Upstash's REST answer out (`{result}` or `{error}`). */
  requester: Requester;
  close(): Promise<void>;
}

/** Commands waiting on a stalled server past this many are refused at once rather than queued. */
const MAX_QUEUED_COMMANDS = 10_000;
/** Reconnection waits double from the first to the last, while the server stays away. */
const RECONNECT_FIRST_MS = 100;
const RECONNECT_MOST_MS = 2_000;

/**
 * @upstash/ratelimit's scripts open with `#!lua flags=allow-key-locking`, a flag only Upstash
 * knows; stock Redis refuses the script (`ERR Unexpected flag in script shebang`). The flag is a
 * locking optimisation, so the line is dropped before the script reaches Redis.
 */
const UPSTASH_SHEBANG = /^#!lua flags=allow-key-locking\r?\n/;

const sha1 = (text: string) => createHash("sha1").update(text).digest("hex");

/**
 * A plain Redis (`REDIS_URL`: `redis://` or `rediss://`, with the URL's user, password and
 * database) behind @upstash/redis's own interface, so @upstash/ratelimit runs on it unchanged:
 * node-redis carries the commands (`new Redis(requester)` is @upstash/redis's public door for a
 * custom transport). node-redis reconnects by itself; while it is away commands fail at once
 * (`disableOfflineQueue`), so a request gets its rule's fail mode without waiting and no backlog
 * of stale checks is replayed on reconnect. Each command is bounded by `commandTimeoutMs`.
 *
 * Scripts: `EVAL` gets the script without Upstash's shebang line, and since Redis then knows it
 * by the SHA-1 of that text, an `EVALSHA` of the library's hash (the SHA-1 of the whole script)
 * is sent as the hash Redis knows. An `EVALSHA` of a script not yet sent answers `NOSCRIPT`, and
 * the library sends the script itself, as it does on Upstash after a flush.
 *
 * @example
 * const { redis, close } = await openPlainRedis(config.REDIS_URL, { commandTimeoutMs: 500, connectWaitMs: 1_000, log });
 * const ratelimit = new Ratelimit({ redis, limiter: Ratelimit.fixedWindow(10, "60000 ms") });
 */
export async function openPlainRedis(url: string, options: PlainRedisOptions): Promise<PlainRedis> {
  const { log } = options;
  const client = createClient({
    url,
    // Upstash's REST API answers in RESP2's shapes (a hash as a flat array), which @upstash/redis reads.
    RESP: 2,
    disableOfflineQueue: true,
    commandsQueueMaxLength: MAX_QUEUED_COMMANDS,
    commandOptions: { timeout: options.commandTimeoutMs },
    socket: {
      connectTimeout: options.commandTimeoutMs,
      reconnectStrategy: (retries) => Math.min(RECONNECT_FIRST_MS * 2 ** retries, RECONNECT_MOST_MS),
    },
  });
  // Logged on change only: the client retries every few hundred milliseconds while the server is away.
  let state: "connecting" | "up" | "down" = "connecting";
  /** Ends start-up's wait when the server refuses the connection (WRONGPASS, NOAUTH): waiting more cannot change its answer. */
  let refused: () => void = () => {};
  const refusal = new Promise<false>((resolve) => (refused = () => resolve(false)));
  client.on("ready", () => {
    state = "up";
    log("info", "redis_connected", {});
  });
  client.on("error", (error: Error & { code?: string }) => {
    if (error instanceof ErrorReply) refused();
    if (state === "down") return;
    log("warn", state === "up" ? "redis_connection_lost" : "redis_unreachable", { reason: reasonOf(error) });
    state = "down";
  });
  const ready = client.connect().then(
    () => true,
    () => false,
  );
  let waitTimer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<false>((resolve) => (waitTimer = setTimeout(() => resolve(false), options.connectWaitMs)));
  await Promise.race([ready, refusal, waited]);
  clearTimeout(waitTimer);
  if (state === "connecting") {
    // Connected at TCP level perhaps, but no answer: a stalled server says nothing an error event could carry.
    log("warn", "redis_unreachable", { reason: `no answer within ${options.connectWaitMs} ms` });
    state = "down";
  }

  /** The library's script hash -> the hash Redis knows the script by, once it has been sent. */
  const knownAs = new Map<string, string>();
  const requester: Requester = {
    async request<TResult>(request: UpstashRequest): Promise<UpstashResponse<TResult>> {
      if (request.path?.length) throw new Error(`not sent to Redis: /${request.path.join("/")}`);
      const command = (request.body as unknown[]).map(String);
      const name = command[0].toLowerCase();
      if (name === "eval" && UPSTASH_SHEBANG.test(command[1])) {
        const script = command[1].replace(UPSTASH_SHEBANG, "");
        knownAs.set(sha1(command[1]), sha1(script));
        command[1] = script;
      } else if (name === "evalsha") {
        command[1] = knownAs.get(command[1]) ?? command[1];
      }
      try {
        return { result: ((await client.sendCommand(command)) ?? null) as TResult };
      } catch (error) {
        // Redis ran the command and refused it (NOSCRIPT among them): an answer, as Upstash's REST API gives it.
        if (error instanceof ErrorReply) return { error: error.message };
        throw error;
      }
    },
  };

  return {
    redis: new Redis(requester),
    requester,
    async close() {
      client.destroy();
      await ready;
    },
  };
}

/** Why, for a log line: a refusal's code word (WRONGPASS, NOAUTH; never the rest, which may quote a command), else the socket error's code. */
function reasonOf(error: Error & { code?: string }): string {
  if (error instanceof ErrorReply) return error.message.split(" ")[0];
  return error.code ?? error.name;
}
