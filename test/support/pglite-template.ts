import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import { migrate } from "../../functions/app/db/migrate.ts";
import { openPglite } from "../../functions/app/db/pglite.ts";

/**
 * Builds, once a run (global-setup.ts), a PGlite data directory migrated and seeded as a first
 * `npm start` leaves it, by the same code (`migrate`). A first start spends ~4.5 s of CPU on
 * PGlite's initdb and the migrations; a copy of this directory opens in ~0.8 s (measured on this
 * project's 2-core VM). The suites about that first start itself (app/entry.test.ts,
 * database/migrate.test.ts) still start from nothing.
 */
export async function buildPgliteTemplate(): Promise<{ dir: string; remove(): void }> {
  const dir = mkdtempSync(join(tmpdir(), "cadence-pglite-template-"));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    const { db } = await openPglite(dir);
    try {
      await migrate(db, { seed: true });
    } finally {
      await db.close();
    }
  } catch (error) {
    remove();
    throw error;
  }
  return { dir, remove };
}

/**
 * `dir` (a new temporary directory by default) holding a copy of the run's template: a migrated,
 * seeded PGlite database of its own, for a server's `DATA_DIR` or `openPglite`. The caller removes it.
 */
export function pgliteDataDir(dir = mkdtempSync(join(tmpdir(), "cadence-pglite-"))): string {
  cpSync(inject("pgliteTemplate"), dir, { recursive: true });
  return dir;
}
