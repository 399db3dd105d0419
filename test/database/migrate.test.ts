import { readdirSync } from "node:fs";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { migrate } from "../../functions/app/db/migrate.ts";
import { openPostgres } from "../../functions/app/db/postgres.ts";

// The migrations a server applies at start on DATABASE_URL (functions/app/db/migrate.ts). The
// workers of `npm run start:workers` start together, as two machines may: each migrates on a session
// of its own, and their runs must not meet.
const migrations = readdirSync(new URL("../../supabase/migrations/", import.meta.url)).filter((file) => file.endsWith(".sql"));

describe("migrations at start", () => {
  const adminUrl = inject("pgAdminUrl");
  const name = `migrate_${process.pid}_${Date.now()}`;
  const url = adminUrl.replace(/\/postgres$/, `/${name}`);
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });

  beforeAll(async () => {
    await admin.unsafe(`create database ${name}`);
  });
  afterAll(async () => {
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  });

  it("applies each migration once when two processes start together on a new database", async () => {
    const sessions = [openPostgres(url, { max: 1 }), openPostgres(url, { max: 1 })];
    try {
      const reports = await Promise.all(sessions.map((session) => migrate(session, { seed: true })));
      expect(reports.map((report) => report.applied.length).sort((a, b) => a - b)).toEqual([0, migrations.length]);
      expect(reports.filter((report) => report.seeded)).toHaveLength(1);
      const ledger = await sessions[0].query<{ version: string }>("select version from supabase_migrations.schema_migrations");
      expect(ledger).toHaveLength(migrations.length);
    } finally {
      await Promise.all(sessions.map((session) => session.close()));
    }
  });
});
