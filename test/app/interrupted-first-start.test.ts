import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { childEnv } from "../support/child-env.ts";
import { freePort } from "../support/postgres-server.ts";
import { endProcessesNaming, processesNaming, type RunningServer, startServer, startV8Flags } from "../support/server.ts";

// Ctrl-C during a first start broke it for good: the database was left migrated and unseeded, and
// every later start served `[]` and `unknown_license` with no hint. A first start is now whole or
// not at all (functions/app/db/migrate.ts: every migration and the seed in one transaction;
// functions/app/db/local-postgres.ts: initdb writes aside, then one rename): stopped at any
// moment, the next start serves the demo data.

const root = new URL("../../", import.meta.url).pathname;
const deno = `${root}node_modules/.bin/deno`;

/** Moments of a first start at which it is stopped: evenly spread over its measured duration. */
const MOMENTS = 8;
/**
 * Ctrl-C and a kill, in turn. A Ctrl-C during the start is kept until the start has finished, then
 * made as a graceful stop (functions/api/index.ts); before the entry listens for it, Deno's default
 * ends the process at once.
 */
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

/** The catalogue's reads a server answers, in order: equal between two servers when their data are. */
async function catalogueOf(server: RunningServer): Promise<string[]> {
  const paths = ["/api/v2/categories", "/api/v2/groups", "/api/v2/frequencies", "/api/v2/color-palettes", "/api/v2/proclamations"];
  return Promise.all(paths.map(async (path) => {
    const response = await fetch(server.url + path);
    expect(response.status, path).toBe(200);
    return response.text();
  }));
}

/** MOMENTS moments evenly inside (0, durationMs): every phase of the first start, whatever its share of it. */
const momentsOver = (durationMs: number) => Array.from({ length: MOMENTS }, (_, i) => Math.round((durationMs * (i + 1)) / (MOMENTS + 1)));

/** Where a killed first start is stopped: the moment, and what it waits for before the kill. */
interface Moment {
  name: string;
  /** Resolves when the start has reached the moment; rejects if it cannot be staged this time (`RaceLost`). */
  reached(start: StartUnderWay): Promise<void>;
}

/** A first start of the entry under way, as `killedAt` runs it. */
interface StartUnderWay {
  dataDir: string;
  /** The port its PostgreSQL takes (SQL_PORT). */
  sqlPort: number;
  /** Resolves once the entry has printed `event`. */
  printed(event: string): Promise<void>;
}

/** A moment whose staging came too late this time (the start had passed it): tried again on a new directory. */
class RaceLost extends Error {}

/** A hang guard for each wait below, never reached by a start that moves. */
const STAGE_GUARD_MS = 120_000;

/** Waits until `ready()` holds, checking every few milliseconds, up to the hang guard. */
async function until(what: string, ready: () => Promise<boolean> | boolean) {
  for (const giveUpAt = Date.now() + STAGE_GUARD_MS; !(await ready());) {
    if (Date.now() > giveUpAt) throw new Error(`hang guard: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The migration run's lock (functions/app/db/migrate.ts): the API takes it before its first migration. */
const MIGRATION_LOCK_KEY = "pg_catalog.hashtext('cadence.migrate')";

/** This checkout's migrations' versions, in the order they apply (functions/app/db/migrate.ts). */
const MIGRATION_VERSIONS = readdirSync(`${root}supabase/migrations`).filter((file) => file.endsWith(".sql")).sort().map((file) => file.split("_")[0]);

/** Sessions of ours that hold the API inside its migrations; ended by the next start's stop of the left-over server. */
const holders: pg.Client[] = [];

/** A session on a first start's PostgreSQL as the API's own (the superuser, DATA_DIR/api-password), once the server answers. */
async function superuserOf(start: StartUnderWay): Promise<pg.Client> {
  for (const giveUpAt = Date.now() + STAGE_GUARD_MS; ;) {
    const client = new pg.Client({
      host: "127.0.0.1",
      port: start.sqlPort,
      user: "postgres",
      password: readFileSync(join(start.dataDir, "api-password"), "utf8").trim(),
      database: "postgres",
    });
    // Ended under it by the next start's stop of the server: heard, not thrown.
    client.on("error", () => {});
    try {
      await client.connect();
      holders.push(client);
      return client;
    } catch (error) {
      if (Date.now() > giveUpAt) throw error;
      await client.end().catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}

/**
 * Holds a first start inside its one transaction of every migration and the seed, at the ledger
 * row of migration `version`: that migration has run, uncommitted. The ledger is made as migrate.ts
 * makes it, ahead of the API's run (whose lock this session takes first), and `version`'s row is
 * inserted by a transaction of ours left open: the API's own insert of that row waits for it.
 */
async function heldAtLedgerRow(start: StartUnderWay, version: string) {
  await start.printed("database_initialising");
  const client = await superuserOf(start);
  const [{ locked }] = (await client.query(`select pg_try_advisory_lock(${MIGRATION_LOCK_KEY}) as locked`)).rows;
  const [{ ledger }] = (await client.query("select to_regclass('supabase_migrations.schema_migrations') is not null as ledger")).rows;
  if (!locked || ledger) throw new RaceLost("the API's migrations had begun before this session took their lock");
  await client.query(`
    create schema if not exists supabase_migrations;
    create table if not exists supabase_migrations.schema_migrations (version text not null primary key, statements text[], name text)`);
  await client.query("begin");
  await client.query("insert into supabase_migrations.schema_migrations (version) values ($1)", [version]);
  await client.query(`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
  await until(`the API's ledger row of ${version}`, async () => {
    const { rows } = await client.query(
      "select count(*)::int as waiting from pg_catalog.pg_locks where locktype = 'transactionid' and transactionid = pg_catalog.pg_current_xact_id()::text::xid and not granted",
    );
    return rows[0].waiting > 0;
  });
}

const moments: Moment[] = [
  { name: "immediately, before it printed anything", reached: async () => {} },
  { name: "once it printed database_initialising", reached: (start) => start.printed("database_initialising") },
  {
    name: "while initdb writes the cluster (DATA_DIR/postgres.first-start-<pid>)",
    reached: async (start) => {
      await start.printed("database_initialising");
      // initdb makes the directory; the start (already at its line) made DATA_DIR before.
      await new Promise<void>((resolve) => {
        const made = () => {
          if (!readdirSync(start.dataDir).some((entry) => entry.startsWith("postgres.first-start-"))) return;
          watcher.close();
          resolve();
        };
        const watcher = watch(start.dataDir, made);
        made();
      });
    },
  },
  {
    name: "after its migrations began (the first one run, inside their transaction)",
    reached: (start) => heldAtLedgerRow(start, MIGRATION_VERSIONS[0]),
  },
  {
    // Where a first start once stopped for good: every migration committed, and no seed.
    name: "between its last migration and the seed (inside their one transaction)",
    reached: (start) => heldAtLedgerRow(start, MIGRATION_VERSIONS.at(-1)!),
  },
  { name: "once the seed was committed (seed_loaded), before it listened", reached: (start) => start.printed("seed_loaded") },
];

/**
 * Runs the entry as `npm start` does on a new DATA_DIR until `moment`, then kills it (SIGKILL),
 * and resolves with what it printed once it has exited.
 */
async function killedAt(dataDir: string, moment: Moment): Promise<string> {
  const sqlPort = await freePort();
  const child = spawn(deno, ["run", "-A", ...startV8Flags, "functions/api/index.ts"], {
    cwd: root,
    env: childEnv({ PORT: "0", SQL_PORT: String(sqlPort), DATA_DIR: dataDir }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const listeners: Array<() => void> = [];
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const onData = (chunk: Buffer) => {
    output += chunk;
    for (const listener of listeners) listener();
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  const printed = (event: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (output.includes(`"event":"${event}"`)) resolve();
        else if (child.exitCode !== null || output.includes('"event":"listening"')) reject(new Error(`the start passed ${event} unseen:\n${output}`));
      };
      listeners.push(check);
      child.once("exit", check);
      check();
    });
  try {
    await Promise.race([
      moment.reached({ dataDir, sqlPort, printed }),
      exited.then(() => Promise.reject(new Error(`the first start ended before the moment, with ${child.exitCode}:\n${output}`))),
    ]);
  } finally {
    child.kill("SIGKILL");
    await exited;
  }
  // Printed its line and listened before the kill came: a start past the moment.
  if (output.includes('"event":"listening"')) throw new RaceLost(`the first start listened before the kill:\n${output}`);
  return output;
}

/** How many `seed_loaded` lines `output` holds. */
const seedsIn = (output: string) => output.split('"event":"seed_loaded"').length - 1;

describe("a first start of the local default database, stopped at any moment, then started again", () => {
  let parent: string;
  let count = 0;
  /** The catalogue an uninterrupted first start serves. */
  let catalogue: string[];

  beforeAll(async () => {
    parent = mkdtempSync(join(tmpdir(), "cadence-first-start-"));
    const uninterrupted = await startServer({ DATA_DIR: join(parent, "uninterrupted") });
    try {
      catalogue = await catalogueOf(uninterrupted);
    } finally {
      await uninterrupted.stop();
    }
  });
  afterAll(async () => {
    await Promise.all(holders.map((holder) => holder.end().catch(() => {})));
    endProcessesNaming(parent);
    rmSync(parent, { recursive: true, force: true });
  });

  it("stops the database it started when Ctrl-C comes during the first start: once the start has finished, and nothing is left running", async () => {
    const dataDir = join(parent, "ctrl-c");
    const child = spawn(deno, ["run", "-A", ...startV8Flags, "functions/api/index.ts"], {
      cwd: root,
      env: childEnv({ PORT: "0", SQL_PORT: "0", DATA_DIR: dataDir }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    let signalled = false;
    const hear = (chunk: Buffer) => {
      output += chunk;
      if (!signalled && output.includes('"event":"database_initialising"')) {
        signalled = true;
        child.kill("SIGINT");
      }
    };
    child.stdout.on("data", hear);
    child.stderr.on("data", hear);
    const code = await new Promise((resolve) => child.once("exit", (exitCode) => resolve(exitCode)));
    expect(code, output).toBe(0);
    expect(output).toContain('"event":"stop_asked","reason":"SIGINT"');
    expect(output).toContain('"event":"stopped","reason":"SIGINT"');
    // pg_ctl's stop returns once the server removed its pid file, an instant before its process ends.
    await until("the database to be gone", () => processesNaming(join(dataDir, "postgres")).length === 0);
    await servesDemoData({ DATA_DIR: dataDir });
  });

  it.each(moments.map((moment) => [moment.name, moment] as const))("serves the demo data, seeded once, after a kill (SIGKILL) %s", async (_, moment) => {
    let dataDir: string;
    let killed: string;
    for (let attempt = 1; ; attempt++) {
      dataDir = join(parent, `stopped-${count++}`);
      try {
        killed = await killedAt(dataDir, moment);
        break;
      } catch (error) {
        // Staged too late: that start is left to the cleanup, and the moment staged again on a new directory.
        if (!(error instanceof RaceLost) || attempt === 5) throw error;
        endProcessesNaming(dataDir);
      }
    }
    // A killed start's initdb is not killed with it and may run on: the next start begins at once
    // beside it, in a directory of its own (local-postgres.ts).
    const next = await startServer({ DATA_DIR: dataDir });
    try {
      const schedule = await fetch(`${next.url}/api/v2/licenses/DEMO-0000-0000-0001/schedule`);
      expect(schedule.status, await schedule.clone().text()).toBe(200);
      expect(await catalogueOf(next)).toEqual(catalogue);
      expect(seedsIn(killed) + seedsIn(next.logs()), `${killed}\n${next.logs()}`).toBe(1);
      expect(existsSync(join(dataDir, `postgres.first-start-${next.pid}`))).toBe(false);
    } finally {
      await next.stop();
    }
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
