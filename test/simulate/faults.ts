import type { Meters } from "./meters.ts";
import type { Production } from "./production.ts";

/** How long the database stays paused (SIGSTOP to SIGCONT). */
export const PAUSE_MS = 3_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * The three faults, at the simulation's times `at` (ms, in order): the database crashed
 * and started again (`pg_ctl stop -m immediate` and start, same port and data), the database
 * paused for PAUSE_MS (every Postgres process stopped), and redis-server stopped and started
 * again, empty. Each is logged with when it ended.
 */
export async function injectFaults(production: Production, meters: Meters, at: [number, number, number], now: () => number, log: (line: string) => void) {
  await sleep(at[0] - now());
  meters.bankDatabase();
  await production.database.crash();
  await production.database.start();
  log(`fault: database crashed and restarted, back at ${(now() / 1000).toFixed(1)} s`);
  await sleep(at[1] - now());
  production.database.pause();
  await sleep(PAUSE_MS);
  production.database.resume();
  log(`fault: database paused for ${PAUSE_MS / 1000} s, resumed at ${(now() / 1000).toFixed(1)} s`);
  await sleep(at[2] - now());
  await meters.bankRedis();
  await production.restartRedis();
  log(`fault: redis-server restarted, back at ${(now() / 1000).toFixed(1)} s`);
}
