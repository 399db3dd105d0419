import { Redis } from "@upstash/redis";
import type { Config } from "../config.ts";
import { importOptional } from "../import-optional.ts";
import type { Logger } from "../log.ts";
import type { RateLimiter } from "./limiter.ts";
import { memoryLimiter } from "./memory.ts";
import { RULES } from "./rules.ts";
import { upstashRatelimit } from "./upstash-ratelimit.ts";

/**
 * The longest a request waits for a networked store. An Upstash round trip from the edge takes a
 * few milliseconds; past half a second the store is treated as down and the rule's fail mode applies.
 */
export const STORE_TIMEOUT_MS = 500;

/** How long start-up waits for a `REDIS_URL` server before serving without it. */
const CONNECT_WAIT_MS = 1_000;

/** How long a networked store is waited for: each check, and the connection at start-up. */
export interface StoreBounds {
  checkMs: number;
  connectMs: number;
}

/** The runtime's bounds: what a request and a start-up promise. */
export const STORE_BOUNDS: StoreBounds = { checkMs: STORE_TIMEOUT_MS, connectMs: CONNECT_WAIT_MS };

export interface LimiterOptions {
  /** Where the edge runtime offers it (`EdgeRuntime.waitUntil`), the library's background work is handed to it. */
  keepAlive?: (work: Promise<unknown>) => void;
  /**
   * `STORE_BOUNDS` unless a test of what a store counts sets its own, so that a loaded machine slows
   * its checks rather than turning them into the fail mode of a slow store.
   */
  bounds?: StoreBounds;
}

export interface LimiterStore {
  limiter: RateLimiter;
  /** For the start-up log: which store, never its URL or token. */
  describe: string;
  close(): Promise<void>;
}

/**
 * Chooses the rate-limit store from the configuration:
 * - `UPSTASH_REDIS_REST_URL` and `UPSTASH_REDIS_REST_TOKEN`: @upstash/ratelimit on Upstash over
 *   its REST API (production), with the operator's choice of analytics and deny lists;
 * - else `REDIS_URL`: @upstash/ratelimit on a plain Redis through node-redis (plain-redis.ts),
 *   imported only then (node-redis is no part of the edge function);
 * - else memory, for the single-process local server.
 * Networked stores answer within `bounds.checkMs` (`STORE_TIMEOUT_MS`); `keepAlive` keeps an edge
 * worker alive for the library's background work.
 *
 * @example
 * const store = await createLimiter(config, log, Date.now, { keepAlive: edgeRuntimeKeepAlive() });
 */
export async function createLimiter(
  config: Partial<Pick<Config, "REDIS_URL" | "UPSTASH_REDIS_REST_URL" | "UPSTASH_REDIS_REST_TOKEN" | "UPSTASH_RATELIMIT_ANALYTICS" | "UPSTASH_RATELIMIT_DENY_LISTS">>,
  log: Logger,
  now: () => number,
  { keepAlive, bounds = STORE_BOUNDS }: LimiterOptions = {},
): Promise<LimiterStore> {
  const networked = { timeoutMs: bounds.checkMs, rules: Object.values(RULES), log, keepAlive };
  if (config.UPSTASH_REDIS_REST_URL && config.UPSTASH_REDIS_REST_TOKEN) {
    const redis = new Redis({
      url: config.UPSTASH_REDIS_REST_URL,
      token: config.UPSTASH_REDIS_REST_TOKEN,
      // Aborts the HTTP call itself (retries included), so abandoned checks do not pile up.
      signal: () => AbortSignal.timeout(bounds.checkMs),
      enableTelemetry: false,
    });
    return {
      limiter: upstashRatelimit(redis, {
        ...networked,
        store: "upstash",
        analytics: config.UPSTASH_RATELIMIT_ANALYTICS,
        denyLists: config.UPSTASH_RATELIMIT_DENY_LISTS,
      }),
      describe: "upstash (UPSTASH_REDIS_REST_URL)",
      close: () => Promise.resolve(),
    };
  }
  if (config.REDIS_URL) {
    const { openPlainRedis } = await importOptional<typeof import("./plain-redis.ts")>(new URL("./plain-redis.ts", import.meta.url));
    const plain = await openPlainRedis(config.REDIS_URL, { commandTimeoutMs: bounds.checkMs, connectWaitMs: bounds.connectMs, log });
    return {
      limiter: upstashRatelimit(plain.redis, { ...networked, store: "redis" }),
      describe: "redis (REDIS_URL)",
      close: plain.close,
    };
  }
  return { limiter: memoryLimiter(now), describe: "memory", close: () => Promise.resolve() };
}
