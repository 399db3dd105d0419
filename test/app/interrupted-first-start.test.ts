import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { childEnv } from "../support/child-env.ts";
import { startServer, startV8Flags } from "../support/server.ts";

// Ctrl-C during a first start broke it for good: the database was left migrated and unseeded, and
// every later start served `[]` and `unknown_license` with no hint. A first start is now whole or
// not at all (functions/app/db/migrate.ts, functions/app/db/embedded-data-dir.ts): stopped at any
// moment, the next start serves the demo data.

const root = new URL("../../", import.meta.url).pathname;
const deno = `${root}node_modules/.bin/deno`;

/** Moments of a first start at which it is stopped: evenly spread over its measured duration. */
const MOMENTS = 8;
/** Ctrl-C (before the entry listens for it, Deno's default: the process ends at once) and a kill, in turn. */
const signalAt = (moment: number): NodeJS.Signals => (moment % 2 === 0 ? "SIGINT" : "SIGKILL");

/**
 * Runs the entry as `npm start` does until it listens, then stops it (SIGTERM), and resolves with
 * how long it took to listen; or, with `stop`, sends that signal `stop.afterMs` after the spawn
 * and resolves once it has exited, wherever it was.
 */
function runEntry(env: Record<string, string>, stop?: { afterMs: number; signal: NodeJS.Signals }): Promise<number> {
  const child = spawn(deno, ["run", "-A", ...startV8Flags, "functions/api/index.ts"], {
    cwd: root,
    env: childEnv({ PORT: "0", SQL_PORT: "0", ...env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const started = performance.now();
  let output = "";
  let listenedAfterMs: number | undefined;
  child.stderr.on("data", (chunk: Buffer) => (output += chunk));
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk;
    if (listenedAfterMs === undefined && output.includes('"event":"listening"')) {
      listenedAfterMs = performance.now() - started;
      if (!stop) child.kill("SIGTERM");
    }
  });
  const timer = stop && setTimeout(() => child.kill(stop.signal), stop.afterMs);
  return new Promise((resolve, reject) => {
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      // Stopped by our signal, or by its own shutdown once it listened: anything else is a failed start.
      if (signal === null && listenedAfterMs === undefined) reject(new Error(`the entry exited with ${code}:\n${output}`));
      else resolve(listenedAfterMs ?? 0);
    });
  });
}

/** Starts the entry on what a stopped first start left, and checks it serves the demo data. */
async function servesDemoData(env: Record<string, string>) {
  const server = await startServer(env);
  try {
    const schedule = await fetch(`${server.url}/api/v2/licenses/DEMO-0000-0000-0001/schedule`);
    expect(schedule.status, await schedule.clone().text()).toBe(200);
    expect(await (await fetch(`${server.url}/api/v2/proclamations`)).json()).not.toEqual([]);
  } finally {
    await server.stop();
  }
}

/** MOMENTS moments evenly inside (0, durationMs): every phase of the first start, whatever its share of it. */
const momentsOver = (durationMs: number) => Array.from({ length: MOMENTS }, (_, i) => Math.round((durationMs * (i + 1)) / (MOMENTS + 1)));

describe("a first start on PGlite, stopped at any moment, then started again", () => {
  let parent: string;
  let durationMs: number;

  beforeAll(async () => {
    parent = mkdtempSync(join(tmpdir(), "cadence-first-start-"));
    durationMs = await runEntry({ DATA_DIR: join(parent, "measured") });
  });
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  it.each(Array.from({ length: MOMENTS }, (_, i) => i))("serves the demo data after a stop at moment %i of the first start", async (moment) => {
    const dataDir = join(parent, `stopped-${moment}`);
    await runEntry({ DATA_DIR: dataDir }, { afterMs: momentsOver(durationMs)[moment], signal: signalAt(moment) });
    await servesDemoData({ DATA_DIR: dataDir });
    expect(existsSync(`${dataDir}.first-start`)).toBe(false);
  });
});

describe("a first start on a new DATABASE_URL, stopped at any moment, then started again", () => {
  const adminUrl = inject("pgAdminUrl");
  const prefix = `first_start_${process.pid}_${Date.now()}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const names: string[] = [];
  let durationMs: number;

  /** A new, empty database: what a first start on a new DATABASE_URL meets. */
  async function newDatabase(suffix: string): Promise<string> {
    const name = `${prefix}_${suffix}`;
    await admin.unsafe(`create database ${name}`);
    names.push(name);
    return adminUrl.replace(/\/postgres$/, `/${name}`);
  }

  beforeAll(async () => {
    durationMs = await runEntry({ DATABASE_URL: await newDatabase("measured") });
  });
  afterAll(async () => {
    for (const name of names) await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  });

  it.each(Array.from({ length: MOMENTS }, (_, i) => i))("serves the demo data after a stop at moment %i of the first start", async (moment) => {
    const url = await newDatabase(`stopped_${moment}`);
    await runEntry({ DATABASE_URL: url }, { afterMs: momentsOver(durationMs)[moment], signal: signalAt(moment) });
    await servesDemoData({ DATABASE_URL: url });
  });
});
