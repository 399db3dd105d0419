/**
 * Variables by which libfaketime moves a process's clock. A child the tests start (the server,
 * a CLI, Postgres) inherits them, so it reads the same clock as the test that compares its
 * answers with `Date.now()`: a suite run under `faketime` moves every process, never only some.
 */
const CLOCK_VARIABLES = /^(LD_PRELOAD|FAKETIME.*|DONT_FAKE_MONOTONIC)$/;

/**
 * The environment of a child process the tests start: a bare one (nothing of the developer's own
 * DATABASE_URL or secrets leaks in), the clock the test runs on, and `env`.
 *
 * @example
 * spawn(deno, ["run", "-A", entry], { env: childEnv({ DATABASE_URL: url }) });
 */
export function childEnv(env: Record<string, string> = {}): Record<string, string> {
  const clock = Object.entries(process.env).filter(([name, value]) => CLOCK_VARIABLES.test(name) && value !== undefined);
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/root",
    NO_COLOR: "1",
    ...Object.fromEntries(clock) as Record<string, string>,
    ...env,
  };
}

/**
 * The environment for a server that cannot run under libfaketime (redis-server dies on its
 * clock_gettime hook): this process's, without the preload.
 */
export function unfakedEnv(): Record<string, string | undefined> {
  const { LD_PRELOAD: _, ...rest } = process.env;
  return rest;
}
