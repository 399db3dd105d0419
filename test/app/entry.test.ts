import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SQL_PORT } from "../../functions/app/config.ts";
import { childEnv } from "../support/child-env.ts";
import { scopedDatabase } from "../support/database.ts";
import { endProcessesNaming, processesNaming, startServer, startV8Flags, type RunningServer } from "../support/server.ts";

const catalogue = [
  "/api/v2/categories",
  "/api/v2/proclamation-categories",
  "/api/v2/groups",
  "/api/v2/proclamation-groups",
  "/api/v2/frequencies",
  "/api/v2/color-palettes",
  "/api/v2/proclamations",
];

async function bodies(server: RunningServer) {
  return Promise.all(catalogue.map(async (path) => {
    const response = await fetch(server.url + path);
    expect(response.status, path).toBe(200);
    return response.text();
  }));
}

/** The JSON lines a server printed, in order. */
function eventsIn(logs: string): Array<{ event: string; level: string; [field: string]: unknown }> {
  return logs.split("\n").flatMap((line) => {
    try {
      const parsed = JSON.parse(line);
      return typeof parsed?.event === "string" ? [parsed] : [];
    } catch {
      return [];
    }
  });
}

/** The lines a server printed for `event`. */
const linesOf = (server: RunningServer, event: string) => eventsIn(server.logs()).filter((line) => line.event === event);

/** The cluster of the local default database in `dataDir` (db/local-postgres.ts). */
const clusterOf = (dataDir: string) => join(dataDir, "postgres");

/** The pid of the postmaster running the cluster in `dataDir`, from its lock file. */
const postmasterOf = (dataDir: string) => Number(readFileSync(join(clusterOf(dataDir), "postmaster.pid"), "utf8").split("\n")[0]);

/** A hang guard for a process's exit, never reached when the server stops as it should. */
const GONE_GUARD_MS = 60_000;

/**
 * Waits until no process names `dataDir`'s cluster: pg_ctl's stop returns once the postmaster has
 * removed its lock file, a moment before that process itself has ended.
 */
async function clusterStopped(dataDir: string) {
  for (const giveUpAt = Date.now() + GONE_GUARD_MS; processesNaming(clusterOf(dataDir)).length > 0;) {
    if (Date.now() > giveUpAt) throw new Error(`still running after the server stopped:\n${JSON.stringify(processesNaming(clusterOf(dataDir)))}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Runs `sql` on a server's local default database as staff do: the `staff` role, the password in DATA_DIR/sql-password. */
async function asStaff(server: RunningServer, dataDir: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port: server.sqlPort,
    user: "staff",
    password: readFileSync(join(dataDir, "sql-password"), "utf8").trim(),
    database: "postgres",
  });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Runs `command` with `sh -c`, as a shell runs a pasted line. */
function shell(command: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile("sh", ["-c", command], { env: childEnv(), encoding: "utf8" }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr });
    });
  });
}

/** Every file and directory under `dir`, with each file's contents: what a start that changes nothing leaves as it was. */
function snapshot(dir: string): Record<string, string> {
  const entries: Record<string, string> = {};
  const walk = (path: string) => {
    for (const name of readdirSync(path)) {
      const child = join(path, name);
      if (statSync(child).isDirectory()) {
        entries[`${child}/`] = "";
        walk(child);
      } else {
        entries[child] = readFileSync(child, "utf8");
      }
    }
  };
  walk(dir);
  return entries;
}

describe("the entry (functions/api/index.ts under Deno)", () => {
  const database = scopedDatabase();
  let onPostgres: RunningServer;
  let parent: string;
  let dataDir: string;
  let onLocal: RunningServer;

  beforeAll(async () => {
    parent = mkdtempSync(join(tmpdir(), "cadence-data-"));
    dataDir = join(parent, "data");
    [onPostgres, onLocal] = await Promise.all([
      // A misspelt variable beside it, which the server names rather than ignores.
      startServer({ DATABASE_URL: database.url, SIGNING_SECRT: "not-the-secret" }),
      startServer({ DATA_DIR: dataDir }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([onPostgres?.stop(), onLocal?.stop()]);
    endProcessesNaming(parent);
    rmSync(parent, { recursive: true, force: true });
  });

  it("the local default database (migrated and seeded at start) serves the same catalogue as the Postgres the Supabase CLI migrated", async () => {
    expect(linesOf(onLocal, "seed_loaded")).toHaveLength(1);
    expect(await bodies(onLocal)).toEqual(await bodies(onPostgres));
  });

  it("names a variable one edit from one of Cadence's in a warning line, never its value", () => {
    expect(onPostgres.logs()).toContain(
      '"event":"variable_not_read","variable":"SIGNING_SECRT","reason":"SIGNING_SECRT is not a variable Cadence reads: did you mean SIGNING_SECRET?"',
    );
    expect(onPostgres.logs()).not.toContain("not-the-secret");
    expect(onLocal.logs()).not.toContain("variable_not_read");
  });

  it("says at start that onboarding answers 401 while its secrets are unset, naming each", () => {
    expect(onLocal.logs()).toContain(
      '"event":"onboarding_secrets_unset","reason":"onboarding requests signed with an unset secret answer 401 until it is set: SIGNING_SECRET (x-signature), STANDARD_WEBHOOKS_SECRET (webhook-signature)"',
    );
  });

  it("names psql on the local default database's listening line (staff, its port, the password read from its file), which works pasted; none on a DATABASE_URL", async () => {
    const [listening] = linesOf(onLocal, "listening");
    const psql = String(listening.psql);
    expect(psql).toContain(" psql -h 127.0.0.1 ");
    expect(psql).toContain(` -p ${onLocal.sqlPort} `);
    expect(psql).toContain(" -U staff ");
    expect(psql).toContain(`"$(cat '${join(dataDir, "sql-password")}')"`);
    // The passwords stay in their files: on no line the server printed.
    for (const file of ["sql-password", "api-password"]) expect(onLocal.logs()).not.toContain(readFileSync(join(dataDir, file), "utf8").trim());
    const pasted = await shell(`${psql} -X -A -t -c 'select current_user'`);
    expect(pasted, pasted.output).toEqual({ code: 0, output: "staff\n" });
    expect(linesOf(onPostgres, "listening")).toHaveLength(1);
    expect(linesOf(onPostgres, "listening")[0]).not.toHaveProperty("psql");
  });

  it("applies no migration twice: the CLI's ledger is the local server's ledger", () => {
    expect(linesOf(onPostgres, "migrations_applied")).toEqual([expect.objectContaining({ applied: 0 })]);
    expect(linesOf(onPostgres, "seed_loaded")).toEqual([]);
  });

  it("runs with the V8 flags of npm start, which bound the heap's growth (and so the server's memory)", () => {
    expect(startV8Flags).toEqual(["--v8-flags=--max-semi-space-size=8,--heap-growing-percent=20"]);
    const commandLine = readFileSync(`/proc/${onPostgres.pid}/cmdline`, "utf8").split("\0");
    expect(commandLine).toContain(startV8Flags[0]);
  });

  it("answers HEAD with the Content-Length of its GET (or none), on every readable route", async () => {
    const paths = ["/api/v2/frequencies", "/api/v2/groups", "/api/v2/proclamations", "/api/v2/licenses/DEMO-0000-0000-0001/schedule", "/api/v2/openapi.json"];
    for (const path of paths) {
      const get = await fetch(`${onPostgres.url}${path}`, { headers: { "x-forwarded-for": "198.51.100.90" } });
      const length = String((await get.arrayBuffer()).byteLength);
      const head = await fetch(`${onPostgres.url}${path}`, { method: "HEAD", headers: { "x-forwarded-for": "198.51.100.91" } });
      expect(head.status, path).toBe(get.status);
      expect([length, null], `${path}: GET ${length}, HEAD ${head.headers.get("content-length")}`).toContain(head.headers.get("content-length"));
    }
  });

  it("answers an unknown path with 404 JSON and a message", async () => {
    const response = await fetch(`${onLocal.url}/api/v2/nope`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ message: "not found" });
  });

  it("answers a known path asked with another method with 405 JSON and an Allow header", async () => {
    const response = await fetch(`${onLocal.url}/api/v2/groups`, { method: "DELETE" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect(await response.json()).toEqual({ message: "method not allowed" });
    const license = await fetch(`${onLocal.url}/api/v2/licenses/DEMO-0000-0000-0001/schedule`, { method: "POST" });
    expect(license.status).toBe(405);
  });

  it("serves the OpenAPI 3.1 document generated from the route schemas", async () => {
    const document = await (await fetch(`${onLocal.url}/api/v2/openapi.json`)).json();
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(catalogue));
    expect(document.components.schemas.Proclamation.required).toEqual(
      expect.arrayContaining(["id", "name", "content", "categoryId", "groupId", "solfeggioFrequencyId"]),
    );
  });

  it("keeps its data across a restart on the same DATA_DIR, without seeding twice", async () => {
    // This block's local server seeded its directory at start (first test); a staff edit, then a restart on it.
    await asStaff(onLocal, dataDir, "insert into public.groups (name, sort_order) values ('Written before the restart', 99)");
    await onLocal.stop();
    onLocal = await startServer({ DATA_DIR: dataDir });
    expect(linesOf(onLocal, "database_initialising")).toEqual([]);
    expect(linesOf(onLocal, "seed_loaded")).toEqual([]);
    const groups: Array<{ name: string }> = JSON.parse((await bodies(onLocal))[2]);
    // The seed's three groups, once, and the row written before the restart.
    expect(groups).toHaveLength(4);
    expect(groups.map((group) => group.name)).toContain("Written before the restart");
  });

  it("stops with a message naming the variable when the configuration is bad", async () => {
    await expect(startServer({ PORT: "eighty" })).rejects.toThrow(/exited with 1[\s\S]*PORT/);
  });
});

describe("the local default database (PostgreSQL 15 in DATA_DIR, started by the entry)", () => {
  let parent: string;
  /** Every server this block started, stopped after it whatever happened. */
  const started: RunningServer[] = [];
  let count = 0;

  beforeAll(() => {
    parent = mkdtempSync(join(tmpdir(), "cadence-local-db-"));
  });
  afterAll(async () => {
    await Promise.all(started.map((server) => server.stop()));
    endProcessesNaming(parent);
    rmSync(parent, { recursive: true, force: true });
  });

  /** A DATA_DIR no start has used yet. */
  const freshDataDir = () => join(parent, `data-${count++}`);
  async function start(dataDir: string): Promise<RunningServer> {
    const server = await startServer({ DATA_DIR: dataDir });
    started.push(server);
    return server;
  }

  it("prints one line each for database_initialising, migrations_applied, seed_loaded and listening at a first start, in that order", async () => {
    const server = await start(freshDataDir());
    const steps = ["database_initialising", "migrations_applied", "seed_loaded", "listening"];
    expect(eventsIn(server.logs()).map((line) => line.event).filter((event) => steps.includes(event))).toEqual(steps);
  });

  for (const [stop, signal] of [["Ctrl-C (SIGINT)", "SIGINT"], ["SIGTERM", "SIGTERM"]] as const) {
    it(`stops PostgreSQL too when the server is stopped by ${stop}`, async () => {
      const dataDir = freshDataDir();
      const server = await start(dataDir);
      expect(processesNaming(clusterOf(dataDir)).map((listed) => listed.pid)).toContain(postmasterOf(dataDir));
      process.kill(server.pid, signal);
      expect(await server.exited).toBe(0);
      expect(linesOf(server, "stopped")).toEqual([expect.objectContaining({ reason: signal })]);
      await clusterStopped(dataDir);
      expect(existsSync(join(clusterOf(dataDir), "postmaster.pid"))).toBe(false);
    });
  }

  describe("after a SIGKILL of the server (kill -9)", () => {
    let dataDir: string;
    let postmaster: number;

    beforeAll(async () => {
      dataDir = freshDataDir();
      const killed = await start(dataDir);
      // Committed by staff before the kill (an INSERT outside a transaction block commits as it returns).
      await asStaff(killed, dataDir, "insert into public.groups (name, sort_order) values ('Committed before kill -9', 99)");
      postmaster = postmasterOf(dataDir);
      await killed.kill();
    });

    it("PostgreSQL is still running: the server started it detached", () => {
      expect(processesNaming(clusterOf(dataDir)).map((listed) => listed.pid)).toContain(postmaster);
    });

    it("the next start stops it in one database_left_running line, then serves the demo data and what was committed before the kill", async () => {
      const next = await start(dataDir);
      expect(linesOf(next, "database_left_running")).toEqual([expect.objectContaining({ level: "warn", pid: postmaster })]);
      expect(processesNaming(clusterOf(dataDir)).map((listed) => listed.pid)).not.toContain(postmaster);
      expect(linesOf(next, "seed_loaded")).toEqual([]);
      const schedule = await fetch(`${next.url}/api/v2/licenses/DEMO-0000-0000-0001/schedule`);
      expect(schedule.status, await schedule.clone().text()).toBe(200);
      const groups: Array<{ name: string }> = await (await fetch(`${next.url}/api/v2/groups`)).json();
      expect(groups.map((group) => group.name)).toContain("Committed before kill -9");
    });
  });

  it("refuses an old PGlite DATA_DIR in one line naming DATA_DIR, with status 1 and no stack trace, and changes nothing", async () => {
    const old = join(parent, "pglite");
    const dataDir = join(old, "data");
    mkdirSync(join(dataDir, "base", "1"), { recursive: true });
    writeFileSync(join(dataDir, "PG_VERSION"), "17\n");
    writeFileSync(join(dataDir, "base", "1", "PG_VERSION"), "17\n");
    // The directory beside it too: no lock file is left there.
    const before = snapshot(old);
    const refused = await startServer({ DATA_DIR: dataDir }).then(
      async (server) => {
        started.push(server);
        return undefined;
      },
      (error: Error) => error,
    );
    expect(refused?.message).toMatch(/ exited with 1:\n/);
    const output = refused!.message.slice(refused!.message.indexOf(":\n") + 2);
    expect(output.trim().split("\n")).toHaveLength(1);
    expect(output.startsWith(`DATA_DIR: ${dataDir} holds a PGlite database`), output).toBe(true);
    expect(output).not.toMatch(/Uncaught|at .*\.ts:\d+/);
    expect(snapshot(old)).toEqual(before);
  });
});

describe("the SQL port's default, 54322, when another process holds it", () => {
  let parent: string;
  /** Our own listener on 54322, unless another process (a developer's `npm start`) already holds it. */
  let holder: Server | undefined;

  beforeAll(() => {
    parent = mkdtempSync(join(tmpdir(), "cadence-sql-default-"));
  });
  /** Holds 54322 with a listener of our own, unless another process already does. */
  const hold = () =>
    new Promise<Server | undefined>((resolve, reject) => {
      const server = createServer();
      server.once("error", (error: NodeJS.ErrnoException) => (error.code === "EADDRINUSE" ? resolve(undefined) : reject(error)));
      server.listen(DEFAULT_SQL_PORT, "127.0.0.1", () => resolve(server));
    });
  /**
   * Starts a server while 54322 is held. The other holder may be a suite beside this one, which
   * lets go of the port when it ends, even during a start that then takes it: such a start is
   * stopped (`tookDefault`) and made again, the port held by us.
   */
  async function startWhileHeld<T>(start: () => Promise<T>, tookDefault: (started: T) => Promise<boolean>): Promise<T> {
    for (;;) {
      holder ??= await hold();
      const started = await start();
      if (!(await tookDefault(started))) return started;
    }
  }
  afterAll(() => {
    holder?.close();
    endProcessesNaming(parent);
    rmSync(parent, { recursive: true, force: true });
  });

  it("starts on a free port with SQL_PORT unset, and says which in one line", async () => {
    // A second checkout, or a test run beside `npm start`: the default is a convenience, not a demand.
    const dataDir = join(parent, "unset");
    const server = await startWhileHeld(() => startServer({ DATA_DIR: dataDir, SQL_PORT: "" }), async (started) => {
      if (started.sqlPort !== DEFAULT_SQL_PORT) return false;
      await started.stop();
      return true;
    });
    try {
      const moved = linesOf(server, "sql_port_moved");
      expect(moved, server.logs()).toHaveLength(1);
      expect(moved[0].reason).toBe(`54322 is in use: the database listens on ${moved[0].port}; set SQL_PORT to choose the port`);
      expect(server.sqlPort).toBe(moved[0].port);
      expect(server.sqlPort).not.toBe(DEFAULT_SQL_PORT);
    } finally {
      await server.stop();
    }
  });

  it("still refuses to start with SQL_PORT=54322 set: the operator asked for that port", async () => {
    const refused = await startWhileHeld(
      () => startServer({ DATA_DIR: join(parent, "set"), SQL_PORT: String(DEFAULT_SQL_PORT) }).then((server) => server, (error: Error) => error),
      async (started) => {
        if (started instanceof Error) return false;
        await started.stop();
        return true;
      },
    );
    // Only a refusal ends the loop: `refused` is the start's error.
    const { message } = refused as Error;
    expect(message).toContain(`port ${DEFAULT_SQL_PORT} is already in use: stop what listens there, or set SQL_PORT to a free port (0 picks one)`);
    expect(message).not.toMatch(/Uncaught|at .*\.ts:\d+/);
  });
});
