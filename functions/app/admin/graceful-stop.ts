import type { Logger } from "../log.ts";
import { errorMessage } from "../log.ts";
import type { Readiness } from "./readiness.ts";

/**
 * The most a stop takes, from the signal to the exit: the proxy's next look (at most
 * `CHECKED_WITHIN_MS`, 5 s), the requests under way (`QUIET_WITHIN_MS`, 11 s: a body arrives within
 * 10 s), the sightings' last write (one `DATABASE_DEADLINE_MS`, 2 s by default) and the pools' close.
 * Past it the process exits anyway, with status 1 and a line saying so: a service manager waits
 * this long and a little more (functions/production/cadence-workers.service, `TimeoutStopSec`).
 */
export const STOP_WITHIN_MS = 25_000;

export interface StopSteps {
  /** Absent without an admin listener: nothing checks the worker, nothing to wait for. */
  readiness?: Readiness;
  /** Stops accepting connections and resolves once every request under way is answered. */
  stopServing(): Promise<void>;
  /** Writes what the worker holds (kiosk sightings) and closes its pools. */
  closeRuntime(): Promise<void>;
  closeAdmin?(): Promise<void>;
  log: Logger;
  exit(code: number): void;
  /** `STOP_WITHIN_MS` unless a test bounds it otherwise. */
  withinMs?: number;
}

/**
 * A worker's stop, in the order that drops no request: `/ready` says draining; once the proxy has
 * looked and read it (HAProxy then sends nothing new), the requests under way finish and the
 * listener closes (http/self-hosted-server.ts); then the sightings are written and the pools
 * closed; the admin listener goes last, so the proxy can read the drain to the end. Where nothing
 * checks the worker (`npm start` alone), it does not wait for a look. Called again while it runs,
 * it does nothing more.
 *
 * @example
 * const stop = gracefulStop({ readiness, stopServing: () => server.shutdown(), closeRuntime: runtime.close, log, exit: Deno.exit });
 * Deno.addSignalListener("SIGTERM", () => void stop("SIGTERM"));
 */
export function gracefulStop(steps: StopSteps): (reason: string) => Promise<void> {
  let stopping: Promise<void> | undefined;
  const withinMs = steps.withinMs ?? STOP_WITHIN_MS;

  async function run(reason: string) {
    const started = performance.now();
    let step = "waiting for the proxy's next check";
    const overrun = setTimeout(() => {
      steps.log("error", "stop_overran", { withinMs, step });
      steps.exit(1);
    }, withinMs);
    steps.log("info", "stopping", { reason });
    try {
      steps.readiness?.drain();
      await steps.readiness?.letGo();
      step = "finishing the requests under way";
      await steps.stopServing();
      step = "writing the sightings held and closing the pools";
      await steps.closeRuntime();
      step = "closing the admin listener";
      await steps.closeAdmin?.();
      steps.log("info", "stopped", { reason, ms: Math.round(performance.now() - started) });
      clearTimeout(overrun);
      steps.exit(0);
    } catch (error) {
      steps.log("error", "stop_failed", { step, error: errorMessage(error) });
      clearTimeout(overrun);
      steps.exit(1);
    }
  }

  return (reason) => (stopping ??= run(reason));
}
