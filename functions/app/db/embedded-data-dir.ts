import { existsSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { ConfigError } from "../config-error.ts";
import { type EmbeddedDatabase, type EmbeddedOptions, openEmbeddedDatabase } from "./embedded-database.ts";
import { migrate, type MigrationReport } from "./migrate.ts";
import { openPglite } from "./pglite.ts";

export interface OpenedDataDir {
  embedded: EmbeddedDatabase;
  /** The migrations this start applied, and whether it loaded the demo seed (a first start). */
  report: MigrationReport;
}

/** Where a first start builds the database before it becomes `dataDir`: beside it, on the same file system. */
const firstStartDirOf = (dataDir: string) => `${resolve(dataDir)}.first-start`;

/** Whether `dir` holds no database yet: PGlite finds one by its PG_VERSION, as Postgres does. */
const holdsNoDatabase = (dir: string) => !existsSync(join(dir, "PG_VERSION"));

/**
 * A first start, whole or not at all: PGlite's initdb, every migration and the demo seed are
 * written to a directory of their own, which becomes `dataDir` by one rename once PGlite has closed
 * it. Stopped at any moment before (Ctrl-C, a kill), it leaves no `dataDir`, and the next start
 * begins again; in `dataDir` itself, a start stopped while PGlite wrote initdb's files left a
 * PG_VERSION beside a cluster it never finished, which every later start tried to open.
 */
async function buildAside(dataDir: string): Promise<MigrationReport> {
  const aside = firstStartDirOf(dataDir);
  // A first start stopped earlier left it; the data directory's lock (data-dir-lock.ts) covers it.
  rmSync(aside, { recursive: true, force: true });
  const { db } = await openPglite(aside);
  let report: MigrationReport;
  try {
    report = await migrate(db, { seed: true });
  } finally {
    await db.close();
  }
  // rename(2) replaces an empty directory, as one made for DATA_DIR beforehand would be.
  renameSync(aside, dataDir);
  return report;
}

/**
 * PGlite in `dataDir`, migrated, in a worker of its own (db/embedded-database.ts): a first start
 * builds the database aside, on this thread as nothing is served yet, and moves it in place
 * migrated and seeded (`buildAside`); a later one applies the pending migrations. The caller holds
 * the directory's lock (data-dir-lock.ts).
 *
 * @example
 * const { embedded, report } = await openDataDir(".data", { deadlineMs: 2_000, log });
 */
export async function openDataDir(dataDir: string, options: EmbeddedOptions): Promise<OpenedDataDir> {
  let firstStart: MigrationReport | undefined;
  if (holdsNoDatabase(dataDir)) {
    if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
      throw new ConfigError(`DATA_DIR: ${dataDir} holds files but no database (no PG_VERSION): set DATA_DIR to a new or empty directory`);
    }
    firstStart = await buildAside(dataDir);
  }
  const embedded = await openEmbeddedDatabase(dataDir, options);
  return { embedded, report: firstStart ?? await migrate(embedded.db, { seed: true }) };
}
