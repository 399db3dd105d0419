import { ConfigError } from "../config-error.ts";
import { errorMessage } from "../log.ts";
import { DatabaseUnavailable } from "./unavailable.ts";

/**
 * PgBouncer's answer to a start-up packet that carries a setting (pgbouncer's `client.c`); a
 * direct connection sets `statement_timeout` there (db/postgres.ts), which no transaction pooler
 * accepts. A pooler's clients belong on SUPABASE_DB_URL, which sends none and is never migrated.
 */
const POOLER_REFUSAL = /unsupported startup parameter/;
/** SQLSTATEs of a URL the server refuses: class 28 (no such login, a wrong password) and 3D000 (no such database). */
const URL_REFUSED = /^(28|3D000$)/;

/**
 * SUPABASE_DB_URL's database has never been migrated (the server never migrates a pooler's): one
 * line naming what to run, with the direct URL (the same one with the database's own port, 5432,
 * password left out), since `supabase db push` needs a session of its own, which a transaction
 * pooler does not keep.
 *
 * @example
 * throw neverMigrated(config.SUPABASE_DB_URL);
 */
export function neverMigrated(url: string): ConfigError {
  const direct = new URL(url);
  direct.port = "5432";
  if (direct.password) direct.password = "<password>";
  return new ConfigError(
    `SUPABASE_DB_URL: ${new URL(url).host} holds no Cadence schema (never migrated): migrate it through the database's direct connection first, e.g. npx supabase db push --db-url '${direct}' (on Supabase: the project's "Direct connection" string)`,
  );
}

/**
 * The start-up migration's failure on DATABASE_URL as one line naming the variable, when the URL
 * itself is what is wrong: a transaction pooler given in place of the database, a server that does
 * not answer, a login or a database it refuses. Anything else (a migration's own error) is
 * returned as it was, stack and all.
 *
 * @example
 * await migrate(session, { seed: true }).catch((error) => Promise.reject(explainDatabaseUrl(error, url)));
 */
export function explainDatabaseUrl(error: unknown, url: string): unknown {
  const where = new URL(url).host;
  const code = (error as { code?: unknown } | null)?.code;
  const message = errorMessage(error);
  if (POOLER_REFUSAL.test(message)) {
    return new ConfigError(
      `DATABASE_URL: ${where} refused the connection's settings as a transaction pooler does (${message}): give DATABASE_URL the database itself (Supabase: the direct connection, port 5432), or give a pooler as SUPABASE_DB_URL, which is never migrated`,
    );
  }
  if (error instanceof DatabaseUnavailable) return new ConfigError(`DATABASE_URL: no answer from ${where}: ${error.reason}`);
  if (typeof code === "string" && URL_REFUSED.test(code)) return new ConfigError(`DATABASE_URL: ${where} refused it: ${message}`);
  return error;
}
