// Writes sql/schema.sql (`npm run schema:snapshot`): a throwaway Postgres 15, migrated with the
// Supabase CLI as the test harness migrates its template, then dumped.
import { writeFileSync } from "node:fs";
import process from "node:process";
import { parseArgs } from "node:util";
import { startPostgresServer } from "./support/postgres-server.ts";
import { dumpSchema, SCHEMA_SNAPSHOT } from "./support/schema-snapshot.ts";
import { pushMigrations } from "./support/supabase-migrations.ts";

const usage = [
  "usage: npm run schema:snapshot",
  "Rewrites sql/schema.sql from the migrations: a throwaway PostgreSQL 15 (the Debian postgresql-15",
  "server), migrated and seeded with the Supabase CLI as the tests' template is, then dumped. It takes",
  "no options; database/schema-snapshot.test.ts fails until it is run after a migration changes.",
].join("\n");
// Before anything is started or written: `--help`, or a flag it does not take, leaves sql/schema.sql alone.
try {
  if (parseArgs({ args: process.argv.slice(2), options: { help: { type: "boolean" } } }).values.help) {
    console.log(usage);
    process.exit(0);
  }
} catch (error) {
  console.error(`${error instanceof Error ? error.message : String(error)}\n${usage}`);
  process.exit(1);
}

const server = await startPostgresServer();
try {
  await pushMigrations(server.url, { seed: true });
  writeFileSync(SCHEMA_SNAPSHOT, dumpSchema(server.url));
} finally {
  await server.stop();
}
console.log(`wrote ${SCHEMA_SNAPSHOT.pathname}`);
