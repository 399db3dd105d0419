import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endProcessesNaming, type RunningServer, startServer } from "../support/server.ts";

// Two servers on one data directory (then PGlite's) each overwrote what the other wrote: three
// accounts onboarded through one of them, their keys already e-mailed, were gone after a restart.
// On PostgreSQL in DATA_DIR, a second start would stop, or initialise, the first one's server
// (functions/app/db/data-dir-lock.ts).
describe("one server per DATA_DIR", () => {
  let parent: string;
  let dataDir: string;
  let lockFile: string;
  let first: RunningServer | undefined;

  beforeAll(async () => {
    parent = mkdtempSync(join(tmpdir(), "cadence-lock-"));
    // A new directory: the first server initialises it, migrates and seeds it.
    dataDir = join(parent, "data");
    lockFile = `${dataDir}.lock`;
    first = await startServer({ DATA_DIR: dataDir });
  });
  afterAll(async () => {
    await first?.stop();
    endProcessesNaming(parent);
    rmSync(parent, { recursive: true, force: true });
  });

  it("refuses a second server on a directory in use, in one line naming DATA_DIR and the holder's pid", async () => {
    const error = await startServer({ DATA_DIR: dataDir }).then(() => undefined, (error: Error) => error);
    expect(error?.message).toMatch(/exited with 1/);
    expect(error?.message).toContain(`DATA_DIR: ${dataDir} is in use by process ${first!.pid}: stop it, or set DATA_DIR to another directory`);
    expect(error?.message).not.toMatch(/Uncaught|at .*\.ts:\d+/);
    // Refused before any database work: it neither stopped nor initialised nor migrated the holder's database.
    for (const event of ["database_left_running", "database_initialising", "migrations_applied"]) expect(error?.message).not.toContain(`"event":"${event}"`);
    // The refused start left the holder's lock as it was, and its database serving.
    expect(readFileSync(lockFile, "utf8").trim()).toBe(String(first!.pid));
    expect((await fetch(`${first!.url}/api/v2/licenses/DEMO-0000-0000-0001/schedule`)).status).toBe(200);
  });

  it("takes over the lock of a server that was killed, with no step by anyone", async () => {
    await first!.kill();
    first = undefined;
    expect(existsSync(lockFile)).toBe(true);
    const next = await startServer({ DATA_DIR: dataDir });
    try {
      expect(readFileSync(lockFile, "utf8").trim()).toBe(String(next.pid));
      const response = await fetch(`${next.url}/api/v2/licenses/DEMO-0000-0000-0001/schedule`);
      expect(response.status).toBe(200);
    } finally {
      await next.stop();
    }
    // A server that stops removes its lock file: nothing is left beside the directory.
    expect(existsSync(lockFile)).toBe(false);
  });
});
