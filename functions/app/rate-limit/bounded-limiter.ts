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
 * Every check has the same bound, so their deadlines fall in the order they were asked: one timer,
 * set for the oldest check still waiting, serves them all. A timer a check, even cleared, kept
 * each request's context alive until it would have fired: measured under load, the garbage
 * collector's extra work cost a fifth of a limited request's CPU.
 *
 * @example
 * const limiter = boundedLimiter(redisLimiter(redis), { timeoutMs: 500, store: "upstash", log });
 */
export function boundedLimiter(store: RateLimiter, options: BoundedLimiterOptions): RateLimiter {
  const { timeoutMs, log } = options;
  let answering = true;
  /**
   * Checks from `first` on, oldest first. An answered check drops its `reject` at once (it would
   * hold the request's whole context alive until the timer passes) and leaves when the timer does.
   */
  let waiting: Check[] = [];
  let first = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  function expireDue() {
    timer = undefined;
    const now = performance.now();
    for (; first < waiting.length && (waiting[first].reject === undefined || waiting[first].deadline <= now); first += 1) {
      const reject = waiting[first].reject;
      waiting[first].reject = undefined;
      reject?.(unavailable(new LimiterUnavailable(`no answer within ${timeoutMs} ms`)));
    }
    waiting = waiting.slice(first);
    first = 0;
    if (waiting.length > 0) timer = setTimeout(expireDue, waiting[0].deadline - now);
  }

  function unavailable(error: unknown): LimiterUnavailable {
    if (answering) {
      answering = false;
      // The reason only: store errors can quote commands, whose keys hold client IPs and e-mails.
      log("warn", "rate_limit_store_unavailable", { store: options.store, reason: reasonOf(error) });
    }
    return error instanceof LimiterUnavailable ? error : new LimiterUnavailable("the store failed", { cause: error });
  }

  return {
    limit(rule: LimitRule, identifier: string): Promise<LimitResult> {
      return new Promise((resolve, reject) => {
        const check: Check = { deadline: performance.now() + timeoutMs, reject };
        waiting.push(check);
        timer ??= setTimeout(expireDue, timeoutMs);
        store.limit(rule, identifier).then(
          (result) => {
            if (check.reject === undefined) return;
            check.reject = undefined;
            if (!answering) {
              answering = true;
              log("info", "rate_limit_store_recovered", { store: options.store });
            }
            resolve(result);
          },
          (error: unknown) => {
            if (check.reject === undefined) return;
            check.reject = undefined;
            reject(unavailable(error));
          },
        );
      });
    },
  };
}

interface Check {
  deadline: number;
  reject: ((error: LimiterUnavailable) => void) | undefined;
}

function reasonOf(error: unknown): string {
  if (error instanceof LimiterUnavailable) return error.message;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") return code;
  if (!(error instanceof Error)) return "unknown";
  // Errors that keep the name "Error" say more by their class.
  return error.name === "Error" ? error.constructor.name : error.name;
}
