import { failureResponse } from "../errors.ts";
import type { Logger } from "../log.ts";
import { unrefTimer } from "../unref-timer.ts";
import type { AppFetch } from "./request-timing.ts";

/**
 * The whole seconds a request refused for overload is told to wait (`Retry-After`), drawn anew for
 * each refusal: a fleet refused in the same second comes back spread over these nine seconds, not
 * together into the same overload.
 */
export const OVERLOAD_RETRY_AFTER_SECONDS = { min: 2, max: 10 } as const;

/**
 * Requests one process works on at once, by default. A kiosk request holds its turn for a few
 * milliseconds when the machine keeps up (a rate-limit check, a batched statement): a 20,000-kiosk
 * boot, about 1,000 requests a second, keeps some tens in flight. Past this many, the machine is
 * not keeping up, and more in flight only lengthens every wait. Measured on 2 cores
 * (test/bench/results.md, 2026-12-07): 256 with 500 ms booted 50,000 kiosks with no request left
 * unanswered; 128 with 250 ms also refused on the event loop's pauses past 250 ms, which a loaded
 * machine gives a 20,000-kiosk boot too.
 */
export const DEFAULT_ADMISSION_LIMIT = 256;

/**
 * The longest a request waits for its turn, by default: a quarter of the 2 s every request is
 * answered in, so a request that waited its whole turn still has its statement's time.
 */
export const DEFAULT_ADMISSION_QUEUE_MS = 500;

/**
 * How often admission's clock ticks on the event loop. A request handled while the last tick is
 * older than this plus `loopBehindMs`, when that tick too came `loopBehindMs` late, waited about
 * that long before the app saw it: the loop is busy with the requests ahead of it, turn after turn,
 * so it is refused at once. One late tick alone is a pause (a collection, a machine that gave the
 * process no CPU for a moment, as a deploy's `npm ci` beside it does), not a queue: the requests
 * it held are served.
 */
export const LOOP_TICK_MS = 20;

/** At most one `requests_shed` line this often, with how many requests were refused since the last. */
export const SHED_LOG_EVERY_MS = 10_000;

/**
 * Why a request was refused: every turn taken and as many waiting as may (`full`), its wait for a
 * turn ran out (`waited`), or the event loop was so far behind that it had waited as long before
 * the app saw it (`behind`).
 */
export type ShedReason = "full" | "waited" | "behind";

export interface AdmissionOptions {
  /** Requests the app works on at once (`ADMISSION_LIMIT`); one more waits for one of them to end. */
  limit: number;
  /** The longest a request waits for its turn (`ADMISSION_QUEUE_MS`) before it is answered 503. */
  queueMs: number;
  /** The most requests waiting at once; one more is answered 503 at once. */
  maxWaiting: number;
  /**
   * How far behind the event loop may run (ms: its LOOP_TICK_MS tick that late, twice in a row)
   * before each request it hands over is answered 503 at once: the loop itself is then the queue,
   * and the request has waited in it already. Unset: not checked.
   */
  loopBehindMs?: number;
  /** The monotonic clock, in ms (`performance.now`). */
  now?: () => number;
  /** Retry-After's range in whole seconds, both ends included. */
  retryAfterSeconds: { min: number; max: number };
  /** A number in [0, 1), for Retry-After's draw. */
  random: () => number;
  /** Told of each request refused, and why. */
  onShed?: (reason: ShedReason) => void;
}

/** Admission at one moment: requests the app works on, requests waiting for a turn. */
export interface AdmissionUse {
  limit: number;
  inFlight: number;
  waiting: number;
}

interface Waiter {
  /** Called with true for its turn, false once its wait has run out; only the first call counts. */
  settle: (admitted: boolean) => void;
  timer: ReturnType<typeof setTimeout>;
  settled: boolean;
}

/**
 * Admission control in front of the app: at most `limit` requests are worked on at once; the next
 * ones wait, first come first served, at most `queueMs` and at most `maxWaiting` of them, and the
 * rest are answered at once with `503 {"message":"service temporarily unavailable"}` and a
 * `Retry-After` drawn from `retryAfterSeconds`. So is every request the event loop hands over while
 * it keeps running `loopBehindMs` behind: requests that waited in the loop (a machine short of CPU runs the
 * loop late before any turn is full) are as late as those that waited for a turn. A refusal reads no body, checks no rate limit and
 * sends no statement: a fleet that asks for more than the machine serves costs it a few
 * microseconds a request beyond what it serves, and every request is answered within `queueMs` of
 * reaching the app plus what an admitted request takes (each statement bounded by
 * DATABASE_DEADLINE_MS), never left waiting in a queue no one bounds.
 *
 * Around the app's fetch, not a Hono middleware: it must come before any route work, and a
 * middleware layer costs more than the check itself on the fastest routes (http/request-timing.ts
 * says the same of the request timing).
 *
 * @example
 * const admitted = admission((request, env) => app.fetch(request, env), { limit: 256, queueMs: 500, maxWaiting: 256, retryAfterSeconds: OVERLOAD_RETRY_AFTER_SECONDS, random: Math.random });
 * Deno.serve((request, info) => admitted.fetch(request, { remoteAddr: info.remoteAddr.hostname }));
 */
export function admission(fetch: AppFetch, options: AdmissionOptions): { fetch: AppFetch; use(): AdmissionUse } {
  const { limit, queueMs, maxWaiting, retryAfterSeconds, random, onShed, loopBehindMs, now = () => performance.now() } = options;
  let inFlight = 0;
  let tickedAt = now();
  /** How late the last tick came. */
  let tickLateBy = 0;
  if (loopBehindMs !== undefined) {
    unrefTimer(setInterval(() => {
      const at = now();
      tickLateBy = at - tickedAt - LOOP_TICK_MS;
      tickedAt = at;
    }, LOOP_TICK_MS));
  }
  const behindMs = loopBehindMs ?? Infinity;
  const behind = () => tickLateBy > behindMs && now() - tickedAt > LOOP_TICK_MS + behindMs;
  let waitingCount = 0;
  // First come first served; a waiter whose wait ran out stays here, settled, until it reaches the front.
  let queue: Waiter[] = [];

  function refuse(reason: ShedReason): Response {
    onShed?.(reason);
    const span = retryAfterSeconds.max - retryAfterSeconds.min + 1;
    return failureResponse("service_unavailable", { "retry-after": String(retryAfterSeconds.min + Math.floor(random() * span)) });
  }

  /** A request ended: its turn goes to the first still waiting, or back to the pool of turns. */
  function release() {
    while (queue.length > 0) {
      const next = queue.shift()!;
      if (next.settled) continue;
      next.settle(true);
      return;
    }
    inFlight -= 1;
  }

  /** Waits for a turn: true once it has one (the turn passed on by `release`), false after `queueMs`. */
  function turn(): Promise<boolean> {
    waitingCount += 1;
    return new Promise((resolve) => {
      const waiter: Waiter = {
        settled: false,
        timer: setTimeout(() => waiter.settle(false), queueMs),
        settle(admitted) {
          if (waiter.settled) return;
          waiter.settled = true;
          waitingCount -= 1;
          clearTimeout(waiter.timer);
          // Waiters that ran out are dropped in bulk once they outnumber those still waiting, so a
          // long overload does not keep them all.
          if (!admitted && queue.length > 2 * waitingCount + 64) queue = queue.filter((w) => !w.settled);
          resolve(admitted);
        },
      };
      queue.push(waiter);
    });
  }

  async function admitted(request: Request, env: Parameters<AppFetch>[1]): Promise<Response> {
    if (behind()) return refuse("behind");
    if (inFlight < limit) inFlight += 1;
    else if (waitingCount >= maxWaiting) return refuse("full");
    else if (!(await turn())) return refuse("waited");
    try {
      return await fetch(request, env);
    } finally {
      release();
    }
  }

  return { fetch: admitted, use: () => ({ limit, inFlight, waiting: waitingCount }) };
}

/**
 * Admission as the entry builds it (`ADMISSION_LIMIT`, `ADMISSION_QUEUE_MS`): as many may wait as
 * may be worked on, the event loop may run as far behind as a request may wait, each refusal is told to `observe` (the admin listener's metrics) and logged
 * as `requests_shed`, at most every 10 s with the count since the last line, never per request.
 *
 * @example
 * const admitted = admissionFromConfig(fetch, config, log);
 */
export function admissionFromConfig(
  fetch: AppFetch,
  config: { ADMISSION_LIMIT: number; ADMISSION_QUEUE_MS: number },
  log: Logger,
  observe?: (reason: ShedReason) => void,
): { fetch: AppFetch; use(): AdmissionUse } {
  const shed: Record<ShedReason, number> = { full: 0, waited: 0, behind: 0 };
  let loggedAt = -Infinity;
  return admission(fetch, {
    limit: config.ADMISSION_LIMIT,
    queueMs: config.ADMISSION_QUEUE_MS,
    maxWaiting: config.ADMISSION_LIMIT,
    // A request the loop held as long as a turn may be waited for has had its wait.
    loopBehindMs: config.ADMISSION_QUEUE_MS,
    retryAfterSeconds: OVERLOAD_RETRY_AFTER_SECONDS,
    random: Math.random,
    onShed(reason) {
      observe?.(reason);
      shed[reason] += 1;
      const now = performance.now();
      if (now - loggedAt < SHED_LOG_EVERY_MS) return;
      loggedAt = now;
      log("warn", "requests_shed", { ...shed, limit: config.ADMISSION_LIMIT, queueMs: config.ADMISSION_QUEUE_MS });
      shed.full = 0;
      shed.waited = 0;
      shed.behind = 0;
    },
  });
}
