import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import postgres from "postgres";

const here = new URL("../../", import.meta.url);

/**
 * Brings the database at `url` to our schema as operators deploy it: the Supabase shim (the roles
 * and the bit of `auth` a plain Postgres lacks), then `supabase/migrations` and, with `seed`, the
 * demo seed, through the real Supabase CLI. `root` is the checkout whose migrations are pushed
 * (another commit's, for the benchmark's `--against`); this one by default.
 *
 * @example
 * await pushMigrations(server.url, { seed: true });
 */
export async function pushMigrations(url: string, options: { seed: boolean; root?: URL }): Promise<void> {
  const root = options.root ?? here;
  const shim = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await shim.unsafe(readFileSync(new URL("sql/supabase-shim.sql", root), "utf8"));
  } finally {
    await shim.end();
  }
  execFileSync(
    new URL("node_modules/.bin/supabase", root).pathname,
    ["db", "push", `--remote=${url}`, ...(options.seed ? ["--include-seed"] : []), "--yes"],
    { cwd: root.pathname, stdio: "pipe", env: { ...process.env, SUPABASE_TELEMETRY_DISABLED: "1", DO_NOT_TRACK: "1" } },
  );
}
