/**
 * How long a worker nobody checked counts as not behind a proxy: the shipped HAProxy checks every
 * second (functions/production/haproxy.cfg, `inter 1s`), so a proxy that checks this worker has
 * done so well within this. A drain waits at most this long for the proxy's next check, and the
 * supervisor at most this long for a new worker's first one.
 */
export const CHECKED_WITHIN_MS = 5_000;

/** What a deploy waits for before a worker takes requests, each met once. */
export type Condition = "migrations" | "listening" | "venues";

export type ReadyStatus = "starting" | "ready" | "draining";

/** What `/ready` answers: its status, and while starting, the conditions not yet met. */
export interface ReadyAnswer {
  status: ReadyStatus;
  waitingFor: Condition[];
}

export interface Readiness {
  /** Marks `condition` met; the worker is ready once every condition is. */
  met(condition: Condition): void;
  /** The worker stops: from now on `/ready` says draining, whatever else holds. */
  drain(): void;
  /** The state now, without counting as a check. */
  state(): ReadyAnswer;
  /** The state, answered to a check (`/ready`): a proxy that checks this worker reads it so. */
  answerCheck(): ReadyAnswer;
  /** Resolves once every condition is met. */
  readonly ready: Promise<void>;
  /**
   * Resolves to true once a check has found the worker ready (HAProxy, `rise 1`, then sends it
   * requests), or to false `CHECKED_WITHIN_MS` after it became ready when no check came: nothing
   * checks it.
   */
  readonly checkedReady: Promise<boolean>;
  /**
   * After `drain()`: resolves once a check has been answered "draining" (HAProxy then sends no new
   * request); at once unless two checks came within `CHECKED_WITHIN_MS` (a proxy checks again and
   * again; an operator's one look is not a proxy); at most `CHECKED_WITHIN_MS` after it began.
   */
  letGo(): Promise<void>;
}

/**
 * A worker's readiness, as a deploy and its proxy need it: starting until every condition of
 * `waitFor` is met, then ready, then draining from `drain()` on. A database outage is none of its
 * business: the proxy keeps a worker whose database is down, which answers kiosks from what it last
 * read (functions/README.md, "Outages"); only what a fresh start must finish, and a stop, take it out.
 * It remembers when it was last checked, so a drain waits for the proxy's next look instead of a
 * fixed time, and does not wait at all where no proxy looks.
 *
 * @example
 * const readiness = workerReadiness(["listening", "venues"]);
 * readiness.met("listening");
 */
export function workerReadiness(waitFor: Condition[], clock: () => number = () => performance.now()): Readiness {
  const waiting = new Set(waitFor);
  let draining = false;
  /** The last two checks' times: a proxy checks again and again, an operator's curl once. */
  let lastChecks = [-Infinity, -Infinity];
  let becameReady!: () => void;
  const ready = new Promise<void>((resolve) => (becameReady = resolve));
  let checkedWhileReady!: () => void;
  const checked = new Promise<void>((resolve) => (checkedWhileReady = resolve));
  /** Those waiting for the next check to find the worker draining. */
  const letGoWaiters = new Set<() => void>();
  if (waiting.size === 0) becameReady();

  const state = (): ReadyAnswer => ({
    status: draining ? "draining" : waiting.size > 0 ? "starting" : "ready",
    waitingFor: draining ? [] : [...waiting],
  });

  const checkedReady = ready.then(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const unchecked = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CHECKED_WITHIN_MS)));
    return Promise.race([checked.then(() => true), unchecked]).finally(() => clearTimeout(timer));
  });

  return {
    met(condition) {
      if (!waiting.delete(condition) || waiting.size > 0) return;
      becameReady();
    },
    drain() {
      draining = true;
    },
    state,
    answerCheck() {
      lastChecks = [lastChecks[1], clock()];
      const answer = state();
      if (answer.status === "ready") checkedWhileReady();
      if (answer.status === "draining") for (const resolve of letGoWaiters) resolve();
      return answer;
    },
    ready,
    checkedReady,
    letGo() {
      if (clock() - lastChecks[0] > CHECKED_WITHIN_MS) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(done, CHECKED_WITHIN_MS);
        function done() {
          clearTimeout(timer);
          letGoWaiters.delete(done);
          resolve();
        }
        letGoWaiters.add(done);
      });
    },
  };
}
