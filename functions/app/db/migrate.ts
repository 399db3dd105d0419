import { readdir, readFile } from "node:fs/promises";
import pg from "pg";
import type { Database } from "./database.ts";

const root = new URL("../../../", import.meta.url);
const migrationsDir = new URL("supabase/migrations/", root);

/**
 * Where the Supabase CLI records applied migrations (`supabase db push`), so the local server and
 * the CLI agree on what is applied.
 */
const ledger = `
  create schema if not exists supabase_migrations;
  create table if not exists supabase_migrations.schema_migrations (
    version text not null primary key,
    statements text[],
    name text
  );`;

export interface MigrationReport {
  applied: string[];
  seeded: boolean;
}

/** This checkout's migration files, in the order they apply. */
async function migrationFiles(): Promise<string[]> {
  return (await readdir(migrationsDir)).filter((file) => file.endsWith(".sql")).sort();
}

/**
 * This checkout's migrations that `db` has not recorded: where the server does not migrate
 * (`SUPABASE_DB_URL`, which `supabase db push` brings up to date), what it still waits for before it
 * is ready. Every one when the database has no ledger yet.
 *
 * @example
 * await pendingMigrations(db); // ["20261127000100_kiosk_watch.sql"] until `supabase db push` ran
 */
export async function pendingMigrations(db: Database): Promise<string[]> {
  const ledgerExists = await db.query<{ exists: boolean }>("select to_regclass('supabase_migrations.schema_migrations') is not null as exists");
  const recorded = ledgerExists[0].exists
    ? new Set((await db.query<{ version: string }>("select version from supabase_migrations.schema_migrations")).map((row) => row.version))
    : new Set<string>();
  return (await migrationFiles()).filter((file) => !recorded.has(file.split("_")[0]));
}

/**
 * Whether `db` was ever migrated: its ledger holds at least one migration. A database through
 * Supabase's pooler (`SUPABASE_DB_URL`) that never was has no `cadence` schema, and every call
 * would fail on it.
 *
 * @example
 * if (!(await everMigrated(db))) throw neverMigrated(url);
 */
export async function everMigrated(db: Database): Promise<boolean> {
  const [{ migrated }] = await db.query<{ migrated: boolean }>(
    "select to_regclass('supabase_migrations.schema_migrations') is not null and exists (select from pg_catalog.pg_namespace where nspname = 'cadence') as migrated",
  );
  return migrated;
}


/**
 * Held for a whole migration run, so processes that start together (the workers of
 * `npm run start:workers`, or two machines) migrate one after another: run at once, two re-created
 * the same function and one failed with "tuple concurrently updated", and each would apply what the
 * other was applying. A session lock, so `db` must be one session (one connection).
 */
const MIGRATION_LOCK = "select pg_advisory_lock(pg_catalog.hashtext('cadence.migrate'))";
const MIGRATION_UNLOCK = "select pg_advisory_unlock(pg_catalog.hashtext('cadence.migrate'))";

/**
 * Brings a database to the current schema: the Supabase shim (for a plain Postgres), then
 * every migration not yet recorded with its ledger row. A new database (an empty ledger) gets every
 * migration and the demo seed in one transaction: a first start stopped at any moment (Ctrl-C, a
 * kill) leaves the ledger empty, so the next start still finds the database new and seeds it. Run
 * one by one, a start stopped between the last migration and the seed left a migrated database
 * that no later start would seed. A database that has a ledger gets each pending migration in its
 * own transaction, and never the seed. `db` is one session (a pool of one connection):
 * the run holds a lock that other processes' runs wait for.
 *
 * @example
 * await migrate(db, { seed: true });
 */
export async function migrate(db: Database, options: { seed: boolean }): Promise<MigrationReport> {
  await db.script(MIGRATION_LOCK);
  try {
    return await migrateLocked(db, options);
  } finally {
    // A session that failed mid-run releases the lock when it closes; its error is the one to report.
    await db.script(MIGRATION_UNLOCK).catch(() => {});
  }
}

async function migrateLocked(db: Database, options: { seed: boolean }): Promise<MigrationReport> {
  await db.script(await readFile(new URL("sql/supabase-shim.sql", root), "utf8"));
  await db.script(ledger);
  const done = new Set(
    (await db.query<{ version: string }>("select version from supabase_migrations.schema_migrations")).map(
      (row) => row.version,
    ),
  );
  const isNew = done.size === 0;
  const pending: Array<{ file: string; script: string }> = [];
  for (const file of await migrationFiles()) {
    const [version, ...rest] = file.slice(0, -".sql".length).split("_");
    if (done.has(version)) continue;
    const body = await readFile(new URL(file, migrationsDir), "utf8");
    const script = `${body}\n;insert into supabase_migrations.schema_migrations (version, statements, name) values (${pg.escapeLiteral(version)}, array[${pg.escapeLiteral(body)}], ${pg.escapeLiteral(rest.join("_"))});`;
    pending.push({ file, script });
  }
  const seeded = isNew && options.seed;
  if (isNew) {
    const seed = seeded ? await readFile(new URL("supabase/seed.sql", root), "utf8") : "";
    await db.script(`${pending.map(({ script }) => script).join("\n")}\n${seed}`);
  } else {
    for (const { script } of pending) await db.script(script);
  }
  return { applied: pending.map(({ file }) => file), seeded };
}
