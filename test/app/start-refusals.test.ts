import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../support/database.ts";
import { startServer, type StartOptions } from "../support/server.ts";

// A setting the operator got wrong stops the start with one line naming the variable to change,
// never a stack trace: `npm start` (functions/api/index.ts) and `npm run start:workers`
// (functions/production/supervisor.ts, which runs that entry once per worker) alike.

/** The start's output when it is refused; fails the test when it starts. */
async function refusal(env: Record<string, string>, options?: StartOptions): Promise<string> {
  const server = await startServer(env, undefined, options).catch((error: Error) => error);
  if (!(server instanceof Error)) {
    await server.stop();
    throw new Error("the server started");
  }
  expect(server.message).toMatch(/exited with 1:/);
  expect(server.message).not.toMatch(/Uncaught|at .*\.ts:\d+/);
  return server.message;
}

/** A port this process listens on, so that no server can take it. */
function listening(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "0.0.0.0", () => resolve(server));
  });
}

describe("a bad setting stops the start in one line naming the variable", () => {
  let database: TestDatabase;
  let taken: Server;
  beforeAll(async () => {
    database = await freshDatabase();
    taken = await listening();
  });
  afterAll(async () => {
    taken?.close();
    await database?.drop();
  });

  it("DATABASE_URL that is not Postgres", async () => {
    expect(await refusal({ DATABASE_URL: "mysql://app:secret@127.0.0.1:3306/app" })).toContain("DATABASE_URL: must be a postgres:// or postgresql:// URL");
  });

  it("REDIS_URL that is not Redis", async () => {
    expect(await refusal({ DATABASE_URL: database.url, REDIS_URL: "http://127.0.0.1:6379" })).toContain("REDIS_URL: must be a redis:// or rediss:// URL");
  });

  it.skipIf(!inject("pgPoolerPort"))("DATABASE_URL that is a transaction pooler (PgBouncer), pointing at SUPABASE_DB_URL", async () => {
    const pooler = new URL(database.url);
    pooler.port = String(inject("pgPoolerPort"));
    const message = await refusal({ DATABASE_URL: pooler.toString() });
    expect(message).toContain(`DATABASE_URL: ${pooler.host} refused the connection's settings as a transaction pooler does (unsupported startup parameter: statement_timeout)`);
    expect(message).toContain("or give a pooler as SUPABASE_DB_URL, which is never migrated");
  });

  it.skipIf(!inject("pgPoolerPort"))("SUPABASE_DB_URL through a transaction pooler to a database never migrated, naming the direct URL to migrate with", async () => {
    const admin = postgres(inject("pgAdminUrl"), { max: 1, onnotice: () => {} });
    const name = `never_migrated_${process.pid}`;
    await admin.unsafe(`create database ${name}`);
    try {
      const pooler = new URL(inject("pgAdminUrl"));
      pooler.port = String(inject("pgPoolerPort"));
      pooler.pathname = `/${name}`;
      const message = await refusal({ SUPABASE_DB_URL: pooler.toString() });
      expect(message).toContain(`SUPABASE_DB_URL: ${pooler.host} holds no Cadence schema (never migrated): migrate it through the database's direct connection first`);
      expect(message).toContain(`supabase db push --db-url 'postgres://postgres@127.0.0.1:5432/${name}'`);
    } finally {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });

  it("DATABASE_URL where nothing answers, or that names no database", async () => {
    const nowhere = new URL(database.url);
    nowhere.port = String((taken.address() as { port: number }).port);
    expect(await refusal({ DATABASE_URL: nowhere.toString() })).toMatch(new RegExp(`DATABASE_URL: no answer from ${nowhere.host}: `));
    const missing = new URL(database.url);
    missing.pathname = "/no_such_database";
    expect(await refusal({ DATABASE_URL: missing.toString() })).toContain(`DATABASE_URL: ${missing.host} refused it: database "no_such_database" does not exist`);
  });

  it("PORT in use under npm start on its own database: refused before any database work", async () => {
    const port = String((taken.address() as { port: number }).port);
    const dataDir = mkdtempSync(join(tmpdir(), "cadence-port-taken-"));
    try {
      const message = await refusal({ DATA_DIR: join(dataDir, "data"), PORT: port });
      expect(message).toContain(`port ${port} is already in use: stop what listens there, or set PORT to a free port (0 picks one)`);
      expect(message).not.toContain("database_initialising");
      expect(existsSync(join(dataDir, "data"))).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("npm run start:workers on a port in use", async () => {
    const port = String((taken.address() as { port: number }).port);
    const message = await refusal({ DATABASE_URL: database.url, DENO_JOBS: "1", PORT: port }, { startScript: true, script: "start:workers" });
    expect(message).toContain(`port ${port} is already in use: stop what listens there, or set PORT to a free port (0 picks one)`);
  });

  it("ADMIN_PORT in use, under npm start and npm run start:workers", async () => {
    const port = String((taken.address() as { port: number }).port);
    const expected = `port ${port} is already in use: stop what listens there, or set ADMIN_PORT to a free port (0 picks one)`;
    expect(await refusal({ DATABASE_URL: database.url, ADMIN_PORT: port })).toContain(expected);
    expect(await refusal({ DATABASE_URL: database.url, DENO_JOBS: "1", ADMIN_PORT: port }, { startScript: true, script: "start:workers" })).toContain(expected);
  });
});
