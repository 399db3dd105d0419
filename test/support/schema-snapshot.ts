import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { PG_BIN } from "./postgres-server.ts";

/** The current schema in one file, for readers: what every migration together defines. */
export const SCHEMA_SNAPSHOT = new URL("../../sql/schema.sql", import.meta.url);

/** The command that writes SCHEMA_SNAPSHOT again (package.json). */
export const REGENERATE_SCHEMA_SNAPSHOT = "npm run schema:snapshot";

const header = `-- The current schema: what supabase/migrations define together, dumped from a freshly migrated
-- database (pg_dump --schema-only of the schemas public and cadence). Generated: do not edit, and
-- do not apply it; deploy with the migrations. Regenerate after changing a migration:
--   ${REGENERATE_SCHEMA_SNAPSHOT}
`;

/**
 * The schema of the database at `url` as `sql/schema.sql` holds it: our two schemas, `public` and
 * `cadence` (not the shim's `auth` stand-in, which Supabase replaces with its own, nor the CLI's
 * `supabase_migrations` ledger), with their grants (the API roles' access is part of the design),
 * and without owners or the lines that differ from one dump or machine to the next.
 *
 * @example
 * writeFileSync(SCHEMA_SNAPSHOT, dumpSchema(url));
 */
export function dumpSchema(url: string): string {
  const dump = execFileSync(
    join(PG_BIN, "pg_dump"),
    ["--schema-only", "--no-owner", "--schema=public", "--schema=cadence", url],
    { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  const stable = dump
    .split("\n")
    // \restrict and \unrestrict carry a random key each run; the version lines name the minor release.
    .filter((line) => !/^\\(un)?restrict /.test(line) && !/^-- Dumped (from database|by pg_dump) version /.test(line))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n\n");
  return `${header}
${stable}`;
}
