import { type Config, parseConfig } from "./config.ts";
import { orExitOnOperatorError } from "./operator-error.ts";

/**
 * The process's configuration: its environment, read here and nowhere else (`Deno.env`, which
 * Supabase's Edge Runtime fills with the function's secrets as `npm start`'s shell does), parsed
 * once by the config schema. A bad variable ends the process with the one line naming it, as
 * every entry ends on a setting it cannot start with (`exitOnOperatorError`).
 *
 * @example
 * const config = configFromEnvironment();
 */
export function configFromEnvironment(): Config {
  return orExitOnOperatorError(() => parseConfig(Deno.env.toObject()));
}
