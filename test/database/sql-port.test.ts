import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../support/database.ts";
import { pgliteDataDir } from "../support/pglite-template.ts";
import { PG_BIN } from "../support/postgres-server.ts";
import { type RunningServer, startServer } from "../support/server.ts";

/** A psql session on the server's SQL port, fed line by line as staff would type. */
class Psql {
  readonly child: ChildProcessWithoutNullStreams;
  output = "";
  readonly exited: Promise<void>;

  constructor(port: number) {
    this.child = spawn(`${PG_BIN}/psql`, ["-X", "-q", "-A", "-t", "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "postgres"]);
    this.child.stdout.on("data", (chunk: Buffer) => (this.output += chunk));
    this.child.stderr.on("data", (chunk: Buffer) => (this.output += chunk));
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
  }

  /** Sends `sql`, then waits until psql has run it (its `\echo` mark is printed). */
  async run(sql: string): Promise<void> {
    const mark = `done-${Math.random().toString(36).slice(2)}`;
    this.child.stdin.write(`${sql}\n\\echo ${mark}\n`);
    await this.printed(mark);
  }

  printed(text: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.output.includes(text)) return resolve();
        if (this.child.exitCode !== null) return reject(new Error(`psql exited before printing ${text}:\n${this.output}`));
        this.child.stdout.once("data", check);
      };
      check();
    });
  }

  async quit(): Promise<void> {
    if (this.child.exitCode === null) this.child.stdin.end("\\q\n");
    await this.exited;
  }
}

/** One statement through psql -c, its output as text. */
function psqlOnce(port: number, sql: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(`${PG_BIN}/psql`, ["-X", "-A", "-t", "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "postgres", "-c", sql]);
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.once("exit", (code) => (code === 0 ? resolve(output.trim()) : reject(new Error(output))));
  });
}

function setSystemName(server: RunningServer, key: string, systemName: string) {
  return fetch(`${server.url}/api/v2/licenses/${key}/system-name`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ systemName }),
  });
}

describe("SQL on the embedded database: psql beside npm start on PGlite", () => {
  let dataDir: string;
  let server: RunningServer;
  let port: number;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "cadence-sql-port-"));
    server = await startServer({ DATA_DIR: pgliteDataDir(join(dataDir, "first")), DATABASE_DEADLINE_MS: "2000" });
    port = server.sqlPort!;
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("shows psql the data the API serves, and the API what psql commits", async () => {
    expect((await setSystemName(server, "DEMO-0000-0000-0002", "front desk")).status).toBe(200);
    expect(await psqlOnce(port, "select system_name from public.license_keys where key = 'DEMO-0000-0000-0002'")).toBe("front desk");
    await psqlOnce(port, "begin; update public.license_keys set system_name = 'back office' where key = 'DEMO-0000-0000-0002'; commit;");
    // System names are unique within an account: the API now sees the name psql committed as taken.
    const response = await setSystemName(server, "DEMO-0000-0000-0001", "back office");
    expect(response.status).toBe(409);
  });

  it("listens on 127.0.0.1 only: another address of this host is refused", async () => {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: "127.0.0.2", port });
      socket.once("connect", () => (socket.destroy(), resolve(false)));
      socket.once("error", () => resolve(true));
    });
    expect(refused).toBe(true);
  });

  it("keeps an idle session's role and search_path out of the API's statements", async () => {
    const psql = new Psql(port);
    try {
      await psql.run("set role anon; set search_path = pg_catalog;");
      const response = await fetch(`${server.url}/api/v2/licenses/DEMO-0000-0000-0001/schedule`);
      expect(response.status).toBe(200);
      await psql.run("select current_user;");
      expect(psql.output).toContain("postgres");
    } finally {
      await psql.quit();
    }
  });

  it("ends a staff transaction the API waits on within a quarter of its deadline, and the API's request is answered", async () => {
    const psql = new Psql(port);
    try {
      await psql.run("begin; update public.license_keys set system_name = 'staff, uncommitted' where key = 'DEMO-0000-0000-0004';");
      // The session now holds its transaction open and sends nothing more: only the server ends it.
      const response = await setSystemName(server, "DEMO-0000-0000-0004", "api write");
      expect(response.status).toBe(200);
      // psql reads the server's FATAL when it next sends something.
      psql.child.stdin.write("select 1;\n");
      await psql.exited;
      expect(psql.output).toContain("terminating connection due to idle-in-transaction timeout: the API needed the database");
      expect(server.logs()).toMatch(/"event":"sql_session_ended".*"graceMs":500/);
    } finally {
      await psql.quit();
    }
  });

  it("never runs an API statement inside a staff transaction: the API's write outlives the staff's rollback", async () => {
    // The previous rule's transaction was rolled back; had the API's write run inside it, it would be gone too.
    expect(await psqlOnce(port, "select system_name from public.license_keys where key = 'DEMO-0000-0000-0004'")).toBe("api write");
  });

  it("serves the API while a session stays connected, idle, outside a transaction", async () => {
    const psql = new Psql(port);
    try {
      await psql.run("select 1;");
      const responses = await Promise.all(Array.from({ length: 20 }, () => fetch(`${server.url}/api/v2/frequencies`)));
      expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
      await psql.run("select count(*) from public.kiosk_status;");
      expect(psql.child.exitCode).toBeNull();
    } finally {
      await psql.quit();
    }
  });

  describe("a port already in use", () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await freshDatabase();
    });
    afterAll(() => database?.drop());

    it("stops the server with one line naming SQL_PORT, before opening PGlite, no stack trace", async () => {
      const error = await startServer({ DATA_DIR: join(dataDir, "second"), SQL_PORT: String(port) })
        .then(() => undefined, (error: Error) => error);
      expect(error?.message).toContain(`port ${port} is already in use: stop what listens there, or set SQL_PORT to a free port (0 picks one)`);
      expect(error?.message).not.toContain("database_ready");
      expect(error?.message).not.toMatch(/Uncaught|at .*\.ts:\d+/);
    });

    it("stops the server with one line naming PORT, no stack trace", async () => {
      const taken = new URL(server.url).port;
      const error = await startServer({ DATABASE_URL: database.url, PORT: taken }).then(() => undefined, (error: Error) => error);
      expect(error?.message).toContain(`port ${taken} is already in use: stop what listens there, or set PORT to a free port (0 picks one)`);
      expect(error?.message).not.toMatch(/Uncaught|at .*\.ts:\d+/);
    });
  });
});
