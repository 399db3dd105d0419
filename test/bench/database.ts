import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import postgres from "postgres";
import { type PostgresServer, startPostgresServer } from "../support/postgres-server.ts";

const root = new URL("../../", import.meta.url);

/**
 * The tests' throwaway Postgres 15, prepared as the test harness prepares its template: the
 * Supabase shim, then our migrations and the demo seed through the real Supabase CLI.
 *
 * @example
 * const database = await benchDatabase();
 * // ... database.url ...
 * await database.server.stop();
 */
export async function benchDatabase(): Promise<{ url: string; server: PostgresServer }> {
  const server = await startPostgresServer();
  const shim = postgres(server.url, { max: 1, onnotice: () => {} });
  try {
    await shim.unsafe(readFileSync(new URL("sql/supabase-shim.sql", root), "utf8"));
  } finally {
    await shim.end();
  }
  execFileSync(
    new URL("node_modules/.bin/supabase", root).pathname,
    ["db", "push", `--remote=${server.url}`, "--include-seed", "--yes"],
    { cwd: root.pathname, stdio: "pipe", env: { ...process.env, SUPABASE_TELEMETRY_DISABLED: "1", DO_NOT_TRACK: "1" } },
  );
  return { url: server.url, server };
}
