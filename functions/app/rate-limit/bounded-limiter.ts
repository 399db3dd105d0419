import type { Logger } from "../log.ts";
import { type LimitResult, type LimitRule, LimiterUnavailable, type RateLimiter } from "./limiter.ts";

export interface BoundedLimiterOptions {
  /** The longest a request waits for the store before its rule's fail mode applies. */
  timeoutMs: number;
  /** Names the store in log lines, e.g. `redis`. */
  store: string;
  log: Logger;
}

/**
 * Bounds a networked store: a call that fails, or has no answer within `timeoutMs`, rejects with
 * `LimiterUnavailable`, so a down or slow Redis never hangs a request. Logs when the store stops
 * answering and when it answers again, not once per request, so an outage cannot flood the log.
 *
 * @example
 * const limiter = boundedLimiter(redisLimiter(redis), { timeoutMs: 500, store: "upstash", log });
 */
export function boundedLimiter(store: RateLimiter, options: BoundedLimiterOptions): RateLimiter {
  const { timeoutMs, log } = options;
  let answering = true;
  return {
    async limit(rule: LimitRule, identifier: string): Promise<LimitResult> {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new LimiterUnavailable(`no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        const result = await Promise.race([store.limit(rule, identifier), deadline]);
        if (!answering) {
          answering = true;
          log("info", "rate_limit_store_recovered", { store: options.store });
        }
        return result;
      } catch (error) {
        const unavailable =
          error instanceof LimiterUnavailable ? error : new LimiterUnavailable("the store failed", { cause: error });
        if (answering) {
          answering = false;
          // The reason only: store errors can quote commands, whose keys hold client IPs and e-mails.
          log("warn", "rate_limit_store_unavailable", { store: options.store, reason: reasonOf(error) });
        }
        throw unavailable;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

function reasonOf(error: unknown): string {
  if (error instanceof LimiterUnavailable) return error.message;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") return code;
  if (!(error instanceof Error)) return "unknown";
  // node-redis's errors (ClientOfflineError, ...) keep the name "Error"; their class says more.
  return error.name === "Error" ? error.constructor.name : error.name;
}
