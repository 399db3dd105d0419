import { authUsersFromConfig } from "./auth-users/auth-users-from-config.ts";
import type { Config } from "./config.ts";
import { ConfigError } from "./config-error.ts";
import { openPostgres } from "./db/postgres.ts";
import type { Logger } from "./log.ts";
import { mailerFromConfig } from "./mail/mailer-from-config.ts";
import type { ScheduledPassPorts } from "./scheduled-pass.ts";

/**
 * The ports of a worker that runs beside the API (the scheduled run in the `outbox` edge function
 * and the `outbox:deliver` command, the Send Email Hook): a database URL only: the
 * local default database belongs to the server that started it, which retries its own queue.
 */
export function workerFromConfig(config: Config, log: Logger): { ports: ScheduledPassPorts; close(): Promise<void> } {
  const url = config.DATABASE_URL ?? config.SUPABASE_DB_URL;
  if (!url) {
    throw new ConfigError(
      "DATABASE_URL: is required to deliver e-mails from a separate process (with the local default database, the running server retries them every minute)",
    );
  }
  const db = openPostgres(url, { max: 1, transactionPooler: !config.DATABASE_URL });
  return {
    ports: { db, mailer: mailerFromConfig(config), now: Date.now, log, authUsers: authUsersFromConfig(config) },
    close: () => db.close(),
  };
}
