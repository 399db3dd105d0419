/**
 * A setting the process cannot start with: its message is one line naming the variable and what to
 * change (a bad value, a port or data directory in use, a database URL that is not the kind
 * wanted). Its own file, below every module that refuses a setting, config.ts among them.
 */
export class ConfigError extends Error {
  override name = "ConfigError";
}
