import postgres from "postgres";
import type { Database } from "./database.ts";

export interface PostgresOptions {
  /** Pool size. */
  max?: number;
  /**
   * Named prepared statements. Off behind Supabase's transaction pooler (port 6543), which
   * cannot keep them across transactions.
   */
  prepare?: boolean;
}

/**
 * A postgres.js pool on `url`.
 *
 * @example
 * const db = openPostgres(process.env.DATABASE_URL, { max: 10 });
 */
export function openPostgres(url: string, options: PostgresOptions = {}): Database {
  const prepare = options.prepare ?? true;
  const sql = postgres(url, {
    max: options.max ?? 10,
    prepare,
    onnotice: () => {},
    connection: { application_name: "cadence" },
  });
  return {
    async query<Row>(text: string, params: readonly unknown[] = []) {
      return (await sql.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare })) as unknown as Row[];
    },
    async script(text: string) {
      await sql.begin((tx) => tx.unsafe(text));
    },
    close: () => sql.end({ timeout: 5 }),
  };
}
