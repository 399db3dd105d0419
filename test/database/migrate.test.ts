import { readdirSync, readFileSync } from "node:fs";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { migrate } from "../../functions/app/db/migrate.ts";
import { openPostgres } from "../../functions/app/db/postgres.ts";

// The migrations a server applies at start on DATABASE_URL (functions/app/db/migrate.ts). The
// workers of `npm run start:workers` start together, as two machines may: each migrates on a session
// of its own, and their runs must not meet.
const migrations = readdirSync(new URL("../../supabase/migrations/", import.meta.url)).filter((file) => file.endsWith(".sql"));

describe("migrations at start", () => {
  it("names each migration by a version of its own: the version is the key of the migrations' ledger, so a second file of one version would never apply", () => {
    const versions = migrations.map((file) => /^(\d+)_/.exec(file)?.[1]);
    expect(versions).not.toContain(undefined);
    expect(versions.filter((version, at) => versions.indexOf(version) !== at)).toEqual([]);
  });

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

  it("leaves a new database new when its first start stops before the seed commits: the next start seeds it", async () => {
    const seed = readFileSync(new URL("../../supabase/seed.sql", import.meta.url), "utf8");
    const stopped = `${name}_stopped`;
    await admin.unsafe(`create database ${stopped}`);
    const session = openPostgres(adminUrl.replace(/\/postgres$/, `/${stopped}`), { max: 1 });
    try {
      // What a kill in the middle of the seed does: the script that carries it never commits.
      const killedAtTheSeed = { ...session, script: (text: string) => text.includes(seed) ? Promise.reject(new Error("killed")) : session.script(text) };
      await expect(migrate(killedAtTheSeed, { seed: true })).rejects.toThrow("killed");
      expect(await session.query("select version from supabase_migrations.schema_migrations")).toEqual([]);
      const next = await migrate(session, { seed: true });
      expect(next).toMatchObject({ seeded: true });
      expect(next.applied).toHaveLength(migrations.length);
      expect(await session.query("select key from public.license_keys where key = 'DEMO-0000-0000-0001'")).toHaveLength(1);
    } finally {
      await session.close();
      await admin.unsafe(`drop database if exists ${stopped} with (force)`);
    }
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
