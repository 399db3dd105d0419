import postgres from "postgres";
import { afterAll, beforeAll, describe, inject, it } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { openPostgres } from "../../functions/app/db/postgres.ts";
import { registerDatabase } from "./clock.ts";
import { TEMPLATE } from "./global-setup.ts";

let counter = 0;

export interface TestDatabase {
  /** The app's pool: direct, or through PgBouncer in the `pooler` project. */
  db: Database;
  /** Superuser URL of this database, direct (as staff reach it), for a second pool or a raw client. */
  url: string;
  /** How a server process reaches this database: `DATABASE_URL`, or `SUPABASE_DB_URL` through the pooler. */
  serverEnv: Record<string, string>;
  drop(): Promise<void>;
}

/**
 * The `pooler` project (vitest.config.ts) runs the suites that matter on Supabase through PgBouncer
 * in transaction mode, as the edge function reaches Postgres there: the app's pool and every
 * server the suite starts go through it.
 */
const THROUGH_POOLER = process.env.CADENCE_TEST_THROUGH_POOLER === "1";

/**
 * `describe` for what the pooler cannot change (pure code, the local default database): run by the `direct` project
 * only, so the `pooler` project runs only what reaches Postgres through PgBouncer.
 */
export const describeDirectOnly = describe.skipIf(THROUGH_POOLER);

/** `it` for one test of a pooler suite that the pooler cannot change (a SQL function beside its TypeScript twin). */
export const itDirectOnly = it.skipIf(THROUGH_POOLER);

function throughPooler(url: string): string {
  const port = inject("pgPoolerPort");
  if (!port) throw new Error("the pooler project needs pgbouncer (apt-get install pgbouncer)");
  const parsed = new URL(url);
  parsed.port = String(port);
  return parsed.toString();
}

/**
 * A new real Postgres 15 database, a copy of the template the Supabase CLI migrated and seeded:
 * isolated from every other test.
 *
 * @example
 * const { db, drop } = await freshDatabase();
 */
export async function freshDatabase(options: { max?: number; deadlineMs?: number } = {}): Promise<TestDatabase> {
  const adminUrl = inject("pgAdminUrl");
  const name = `t_${process.pid}_${Date.now()}_${counter++}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name} template ${TEMPLATE}`);
  } finally {
    await admin.end();
  }
  const url = adminUrl.replace(/\/postgres$/, `/${name}`);
  const pool = { max: options.max ?? 10, deadlineMs: options.deadlineMs };
  const db = THROUGH_POOLER ? openPostgres(throughPooler(url), { ...pool, transactionPooler: true }) : openPostgres(url, pool);
  registerDatabase(db, url);
  return {
    db,
    url,
    serverEnv: THROUGH_POOLER ? { SUPABASE_DB_URL: throughPooler(url) } : { DATABASE_URL: url },
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
export function scopedDatabase(options: { max?: number; deadlineMs?: number } = {}): TestDatabase {
  const scoped = {} as TestDatabase;
  beforeAll(async () => {
    Object.assign(scoped, await freshDatabase(options));
  });
  afterAll(() => scoped.drop?.());
  return scoped;
}
