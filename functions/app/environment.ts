import { type Config, configSchema, parseConfig } from "./config.ts";
import { type NearMiss, nearMisses } from "./near-miss-variables.ts";
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

/**
 * The environment's variables that look like a misspelt variable of Cadence's, each with the one
 * it is one edit from: the entry names each in a warning line.
 *
 * @example
 * for (const miss of misspeltVariables()) log("warn", "variable_ignored", { ...miss });
 */
export function misspeltVariables(): NearMiss[] {
  return nearMisses(Object.keys(Deno.env.toObject()), Object.keys(configSchema.shape));
}
