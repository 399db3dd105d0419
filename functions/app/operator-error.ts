import { ConfigError } from "./config-error.ts";
import { PortInUseError } from "./http/port-in-use.ts";

/**
 * For the entries: a bad variable, a port or a data directory in use ends the process with the
 * error's one line, which names what to change, and no stack trace. Anything else is thrown on.
 *
 * @example
 * const runtime = await openRuntime(config, consoleLogger).catch(exitOnOperatorError);
 */
export function exitOnOperatorError(error: unknown): never {
  if (!(error instanceof ConfigError || error instanceof PortInUseError)) throw error;
  console.error(error.message);
  Deno.exit(1);
}

/**
 * What `make` builds, or the end of the process on an operator's error (`exitOnOperatorError`):
 * for entries that build what a bad setting refuses.
 *
 * @example
 * const outbox = orExitOnOperatorError(() => workerFromConfig(config, consoleLogger));
 */
export function orExitOnOperatorError<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    return exitOnOperatorError(error);
  }
}
