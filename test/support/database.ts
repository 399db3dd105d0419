import postgres from "postgres";
import { afterAll, beforeAll, inject } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { migrate } from "../../functions/app/db/migrate.ts";
import { openPglite } from "../../functions/app/db/pglite.ts";
import { openPostgres } from "../../functions/app/db/postgres.ts";
import { registerDatabase } from "./clock.ts";
import { TEMPLATE } from "./global-setup.ts";

let counter = 0;

export interface TestDatabase {
  db: Database;
  /** Superuser URL of this database, for a server process or a second pool. */
  url: string;
  drop(): Promise<void>;
}

/**
 * A new real Postgres 15 database, a copy of the template the Supabase CLI migrated and seeded:
 * isolated from every other test.
 *
 * @example
 * const { db, drop } = await freshDatabase();
 */
export async function freshDatabase(options: { max?: number } = {}): Promise<TestDatabase> {
  const adminUrl = inject("pgAdminUrl");
  const name = `t_${process.pid}_${Date.now()}_${counter++}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name} template ${TEMPLATE}`);
  } finally {
    await admin.end();
  }
  const url = adminUrl.replace(/\/postgres$/, `/${name}`);
  const db = openPostgres(url, { max: options.max ?? 10 });
  registerDatabase(db, url);
  return {
    db,
    url,
    async drop() {
      await db.close();
      const dropper = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        await dropper.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await dropper.end();
      }
    },
  };
}

/**
 * A fresh database for the calling `describe` block: made before its tests, dropped after. For a
 * process on the real clock (the entry under Deno, a CLI) in a suite whose app runs on a test
 * clock: the two never meet on the same rows (see `assertRealClockOnly`). Read its fields inside tests.
 */
export function scopedDatabase(): TestDatabase {
  const scoped = {} as TestDatabase;
  beforeAll(async () => {
    Object.assign(scoped, await freshDatabase());
  });
  afterAll(() => scoped.drop?.());
  return scoped;
}

/** An in-memory PGlite database, migrated and seeded the way `npm start` does it. */
export async function pgliteDatabase(): Promise<Database> {
  const db = await openPglite();
  await migrate(db, { seed: true });
  return db;
}
