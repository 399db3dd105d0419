import { mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import process from "node:process";
import { ConfigError } from "../config-error.ts";

/** Held while a process uses the local database's directory; `release` once its server has stopped. */
export interface DataDirLock {
  release(): void;
}

/**
 * The part of Deno's API the lock needs, which Node's has no equivalent of (flock). Declared here
 * because tsc checks this file under Node's types (runtime.ts reaches it), where `Deno` is unknown.
 */
interface LockableFile {
  tryLockSync(exclusive: boolean): boolean;
  statSync(): { ino: number | null };
  close(): void;
}
const openLockable = (path: string) =>
  (globalThis as unknown as {
    Deno: { openSync(path: string, options: { read: true; write: true; create: true }): LockableFile };
  }).Deno.openSync(path, { read: true, write: true, create: true });

/**
 * The lock file of `dataDir`: beside it, not in it, so it covers `dataDir` before a first start has
 * made it, and a listing of `dataDir` shows only the database's files (db/local-postgres.ts).
 */
const lockFileOf = (dataDir: string) => `${resolve(dataDir)}.lock`;

/** The pid the holder wrote in the lock file, or undefined in the instant between its lock and its write. */
function holderOf(path: string): string | undefined {
  try {
    return /^\d+$/.exec(readFileSync(path, "utf8").trim())?.[0];
  } catch {
    return undefined;
  }
}

/** The inode of the file at `path` now, if there is one. */
function inodeAt(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

/**
 * Takes `dataDir` for this process alone, or throws a ConfigError naming DATA_DIR and the process
 * that holds it: two starts on one directory would each run, stop or initialise the other's server
 * (two embedded databases on one directory once overwrote what the other wrote: onboarded
 * accounts, their keys already e-mailed, were gone after a restart).
 *
 * The lock is the kernel's: flock(2) on `<dataDir>.lock` (Deno.FsFile.tryLockSync; /proc/locks
 * lists it as FLOCK). The kernel releases it when the holder's process ends, however it ends, so a
 * lock left by a killed process is taken over by the next start without a step by anyone, and a
 * reused pid can never pass for the holder, as it can in a pid file checked for liveness. The pid
 * written in the file only names the holder in the refusal. The file is removed on release, so a
 * start that opened it just before holds a lock on a file no longer there: a lock counts only
 * while the file at the path is the one locked.
 *
 * @example
 * const lock = lockDataDir(".data");
 * // ... PostgreSQL in .data, then stopped ...
 * lock.release();
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const path = lockFileOf(dataDir);
  // The lock beside DATA_DIR comes before DATA_DIR itself: its parents first.
  mkdirSync(dirname(path), { recursive: true });
  for (;;) {
    const file = openLockable(path);
    if (!file.tryLockSync(true)) {
      file.close();
      const holder = holderOf(path);
      throw new ConfigError(`DATA_DIR: ${dataDir} is in use by ${holder ? `process ${holder}` : "another process"}: stop it, or set DATA_DIR to another directory`);
    }
    const locked = file.statSync().ino;
    if (inodeAt(path) === locked) {
      writeFileSync(path, `${process.pid}\n`);
      return {
        release() {
          // Removed by hand meanwhile, perhaps re-created by another start: that file is not ours.
          if (inodeAt(path) === locked) unlinkSync(path);
          file.close();
        },
      };
    }
    // Its holder released and removed it between our open and our lock: lock the file there now.
    file.close();
  }
}
