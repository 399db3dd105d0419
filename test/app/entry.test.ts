import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SQL_PORT } from "../../functions/app/config.ts";
import { scopedDatabase } from "../support/database.ts";
import { pgliteDataDir } from "../support/pglite-template.ts";
import { startServer, startV8Flags, type RunningServer } from "../support/server.ts";

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

describe("the entry (functions/api/index.ts under Deno)", () => {
  const database = scopedDatabase();
  let onPostgres: RunningServer;
  let dataDir: string;
  let onPglite: RunningServer;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "cadence-data-"));
    [onPostgres, onPglite] = await Promise.all([
      startServer({ DATABASE_URL: database.url }),
      startServer({ DATA_DIR: dataDir }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([onPostgres?.stop(), onPglite?.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("serves the same catalogue on PGlite (migrated and seeded at start) as on the Postgres the Supabase CLI migrated", async () => {
    expect(onPglite.logs()).toContain('"seeded":true');
    expect(await bodies(onPglite)).toEqual(await bodies(onPostgres));
  });

  it("says at start that onboarding answers 401 while its secrets are unset, naming each", () => {
    expect(onPglite.logs()).toContain(
      '"event":"onboarding_secrets_unset","reason":"onboarding requests signed with an unset secret answer 401 until it is set: SIGNING_SECRET (x-signature), STANDARD_WEBHOOKS_SECRET (webhook-signature)"',
    );
  });

  it("names the SQL port on PGlite's listening line, and none on a Postgres of its own", () => {
    expect(onPglite.logs()).toMatch(/"event":"listening".*"sql":"psql -h 127\.0\.0\.1 -p \d+ -U postgres"/);
    expect(onPostgres.logs()).not.toContain('"sql":');
  });

  it("applies no migration twice: the CLI's ledger is the local server's ledger", () => {
    expect(onPostgres.logs()).toContain('"migrationsApplied":0');
    expect(onPostgres.logs()).toContain('"seeded":false');
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
    const response = await fetch(`${onPglite.url}/api/v2/nope`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ message: "not found" });
  });

  it("answers a known path asked with another method with 405 JSON and an Allow header", async () => {
    const response = await fetch(`${onPglite.url}/api/v2/groups`, { method: "DELETE" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect(await response.json()).toEqual({ message: "method not allowed" });
    const license = await fetch(`${onPglite.url}/api/v2/licenses/DEMO-0000-0000-0001/schedule`, { method: "POST" });
    expect(license.status).toBe(405);
  });

  it("serves the OpenAPI 3.1 document generated from the route schemas", async () => {
    const document = await (await fetch(`${onPglite.url}/api/v2/openapi.json`)).json();
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(catalogue));
    expect(document.components.schemas.Proclamation.required).toEqual(
      expect.arrayContaining(["id", "name", "content", "categoryId", "groupId", "solfeggioFrequencyId"]),
    );
  });

  it("keeps its data across a restart on the same DATA_DIR, without seeding twice", async () => {
    // This block's PGlite server seeded its directory at start (first test); it restarts on it.
    await onPglite.stop();
    onPglite = await startServer({ DATA_DIR: dataDir });
    expect(onPglite.logs()).toContain('"seeded":false');
    expect(JSON.parse((await bodies(onPglite))[2])).toHaveLength(3);
  });

  it("stops with a message naming the variable when the configuration is bad", async () => {
    await expect(startServer({ PORT: "eighty" })).rejects.toThrow(/exited with 1[\s\S]*PORT/);
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
    rmSync(parent, { recursive: true, force: true });
  });

  it("starts on a free port with SQL_PORT unset, and says which in one line", async () => {
    // A second checkout, or a test run beside `npm start`: the default is a convenience, not a demand.
    const dataDir = pgliteDataDir(join(parent, "unset"));
    const server = await startWhileHeld(() => startServer({ DATA_DIR: dataDir, SQL_PORT: "" }), async (started) => {
      if (started.sqlPort !== DEFAULT_SQL_PORT) return false;
      await started.stop();
      return true;
    });
    try {
      const moved = /"event":"sql_port_moved","port":(\d+),"reason":"54322 is in use: psql -p (\d+), or set SQL_PORT to choose the port"/.exec(server.logs());
      expect(moved, server.logs()).not.toBeNull();
      expect(moved![1]).toBe(moved![2]);
      expect(server.sqlPort).toBe(Number(moved![1]));
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
