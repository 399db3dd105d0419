import { Redis } from "@upstash/redis";
import type { Config } from "../config.ts";
import { importOptional } from "../import-optional.ts";
import type { Logger } from "../log.ts";
import { boundedLimiter } from "./bounded-limiter.ts";
import type { RateLimiter } from "./limiter.ts";
import { memoryLimiter } from "./memory.ts";
import { redisLimiter } from "./redis-limiter.ts";

/**
 * The longest a request waits for a networked store. An Upstash round trip from the edge takes a
 * few milliseconds; past half a second the store is treated as down and the rule's fail mode applies.
 */
export const STORE_TIMEOUT_MS = 500;

/** How long start-up waits for a `REDIS_URL` server before serving without it. */
const CONNECT_WAIT_MS = 1_000;

export interface LimiterStore {
  limiter: RateLimiter;
  /** For the start-up log: which store, never its URL or token. */
  describe: string;
  close(): void;
}

/**
 * Chooses the rate-limit store from the configuration:
 * - `UPSTASH_REDIS_REST_URL` and `UPSTASH_REDIS_REST_TOKEN`: Upstash over its REST API (production);
 * - else `REDIS_URL`: a plain Redis, running the same script over our own connection, imported only
 *   then (its connection is no part of the edge function);
 * - else memory, for the single-process local server.
 * Networked stores are bounded by `STORE_TIMEOUT_MS`.
 *
 * @example
 * const store = await createLimiter(config, log, Date.now);
 */
export async function createLimiter(
  config: Pick<Config, "REDIS_URL" | "UPSTASH_REDIS_REST_URL" | "UPSTASH_REDIS_REST_TOKEN">,
  log: Logger,
  now: () => number,
): Promise<LimiterStore> {
  if (config.UPSTASH_REDIS_REST_URL && config.UPSTASH_REDIS_REST_TOKEN) {
    const redis = new Redis({
      url: config.UPSTASH_REDIS_REST_URL,
      token: config.UPSTASH_REDIS_REST_TOKEN,
      // Aborts the HTTP call itself (retries included), so abandoned checks do not pile up.
      signal: () => AbortSignal.timeout(STORE_TIMEOUT_MS),
      enableTelemetry: false,
    });
    return {
      limiter: boundedLimiter(
        redisLimiter((script) => {
          const loaded = redis.createScript<number[]>(script);
          return (keys, args) => loaded.exec(keys, args);
        }),
        { timeoutMs: STORE_TIMEOUT_MS, store: "upstash", log },
      ),
      describe: "upstash (UPSTASH_REDIS_REST_URL)",
      close: () => {},
    };
  }
  if (config.REDIS_URL) {
    const { openRedisConnection } = await importOptional<typeof import("./redis-connection.ts")>(
      new URL("./redis-connection.ts", import.meta.url),
    );
    const { redisScript } = await importOptional<typeof import("./redis-script.ts")>(new URL("./redis-script.ts", import.meta.url));
    const connection = await openRedisConnection(config.REDIS_URL, {
      commandTimeoutMs: STORE_TIMEOUT_MS,
      connectWaitMs: CONNECT_WAIT_MS,
      log,
    });
    return {
      limiter: boundedLimiter(
        redisLimiter((script) => redisScript<number[]>(connection.client, script)),
        { timeoutMs: STORE_TIMEOUT_MS, store: "redis", log },
      ),
      describe: "redis (REDIS_URL)",
      close: connection.close,
    };
  }
  return { limiter: memoryLimiter(now), describe: "memory", close: () => {} };
}
