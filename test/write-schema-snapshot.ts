// Writes sql/schema.sql (`npm run schema:snapshot`): a throwaway Postgres 15, migrated with the
// Supabase CLI as the test harness migrates its template, then dumped.
import { writeFileSync } from "node:fs";
import { startPostgresServer } from "./support/postgres-server.ts";
import { dumpSchema, SCHEMA_SNAPSHOT } from "./support/schema-snapshot.ts";
import { pushMigrations } from "./support/supabase-migrations.ts";

const server = await startPostgresServer();
try {
  await pushMigrations(server.url, { seed: true });
  writeFileSync(SCHEMA_SNAPSHOT, dumpSchema(server.url));
} finally {
  await server.stop();
}
console.log(`wrote ${SCHEMA_SNAPSHOT.pathname}`);
