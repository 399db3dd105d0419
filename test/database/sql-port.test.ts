import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import pg from "pg";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyFromStdin } from "../../functions/app/db/sql-port/copy-from-stdin.ts";
import { ByteQueue, SERVING_LIMITS } from "../../functions/app/db/sql-port/protocol-framing.ts";
import { scramExchange, scramSecret } from "../../functions/app/db/sql-port/scram.ts";
import { freshDatabase, type TestDatabase } from "../support/database.ts";
import { pgliteDataDir } from "../support/pglite-template.ts";
import { PG_BIN } from "../support/postgres-server.ts";
import { type RunningServer, startServer } from "../support/server.ts";
import { authenticated, errorField, int32s, message, query, startupPacket, WireClient } from "../support/wire-client.ts";

/**
 * The API's deadline in these servers (DATABASE_DEADLINE_MS): the bounds below are derived from it,
 * never from this machine's speed. Five times the default: a held database must still stall the
 * API far longer (pg_sleep(60)), while a busy machine's PGlite took over 2 s over a system name
 * (503) beside two CPU-bound processes.
 */
const DEADLINE_MS = 10_000;
/** The port's default password, as Supabase's local database has it. */
const PASSWORD = "postgres";
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const KEY = "DEMO-0000-0000-0001";

let ipCounter = 0;
/** A request from a client IP of its own (the servers trust X-Forwarded-For), so rate limits never interfere; with its time. */
async function call(server: RunningServer, path: string, init: RequestInit = {}) {
  ipCounter += 1;
  const headers = new Headers(init.headers);
  headers.set("x-forwarded-for", `10.50.${(ipCounter >> 8) & 255}.${ipCounter & 255}`);
  const started = performance.now();
  const response = await fetch(server.url + path, { ...init, headers });
  await response.arrayBuffer();
  return { status: response.status, age: response.headers.get("age"), ms: performance.now() - started };
}

function setSystemName(server: RunningServer, key: string, systemName: string) {
  return call(server, `/api/v2/licenses/${key}/system-name`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ systemName }),
  });
}

/** A psql session on the server's SQL port, fed line by line as staff would type. */
class Psql {
  readonly child: ChildProcessWithoutNullStreams;
  output = "";
  readonly exited: Promise<void>;

  constructor(port: number, password = PASSWORD) {
    this.child = spawn(`${PG_BIN}/psql`, ["-X", "-q", "-A", "-t", "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "postgres"], {
      env: { ...process.env, PGPASSWORD: password },
    });
    this.child.stdout.on("data", (chunk: Buffer) => (this.output += chunk));
    this.child.stderr.on("data", (chunk: Buffer) => (this.output += chunk));
    // A session psql ended (refused, or quit) closes its input: what it printed tells the test why.
    this.child.stdin.on("error", () => {});
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
  }

  /** Sends `sql` without waiting for it. */
  send(sql: string): void {
    this.child.stdin.write(`${sql}\n`);
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
        this.child.stderr.once("data", check);
      };
      check();
    });
  }

  async quit(): Promise<void> {
    if (this.child.exitCode === null) this.child.stdin.end("\\q\n");
    await this.exited;
  }
}

/** psql run once: `-c` statements or `-f` a file, `input` on its stdin; its exit code and everything it printed. */
function psql(port: number, args: string[], { password = PASSWORD, user = "postgres", input = "" } = {}): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(`${PG_BIN}/psql`, ["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(port), "-U", user, "postgres", ...args], {
      env: { ...process.env, PGPASSWORD: password },
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    // psql refused at the door (a wrong password) exits without reading its input: the pipe's
    // EPIPE is that exit, which the exit code reports.
    child.stdin.on("error", () => {});
    child.stdin.end(input);
    child.once("exit", (code) => resolve({ code: code ?? -1, output: output.trim() }));
  });
}

/** One statement through psql -c, its output as text; throws with psql's output if it fails. */
async function psqlOnce(port: number, sql: string): Promise<string> {
  const { code, output } = await psql(port, ["-c", sql]);
  if (code !== 0) throw new Error(output);
  return output;
}

/** Open descriptors of the server's process. */
const descriptors = (server: RunningServer) => readdirSync(`/proc/${server.pid}/fd`).length;

/** Polls `condition` every 50 ms; the test's own timeout bounds the wait. */
async function until(condition: () => boolean | Promise<boolean>) {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 50));
}

let dataDir: string;
let server: RunningServer;
let port: number;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "cadence-sql-port-"));
  server = await startServer({ DATA_DIR: pgliteDataDir(join(dataDir, "first")), DATABASE_DEADLINE_MS: String(DEADLINE_MS), TRUST_PROXY: "true" });
  port = server.sqlPort!;
});
afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("SQL on the embedded database: psql beside npm start on PGlite", () => {
  it("shows psql the data the API serves, and the API what psql commits", async () => {
    expect((await setSystemName(server, "DEMO-0000-0000-0002", "front desk")).status).toBe(200);
    expect(await psqlOnce(port, "select system_name from public.license_keys where key = 'DEMO-0000-0000-0002'")).toBe("front desk");
    await psqlOnce(port, "begin; update public.license_keys set system_name = 'back office' where key = 'DEMO-0000-0000-0002'; commit;");
    // System names are unique within an account: the API now sees the name psql committed as taken.
    expect((await setSystemName(server, "DEMO-0000-0000-0001", "back office")).status).toBe(409);
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
    const session = new Psql(port);
    try {
      await session.run("set role anon; set search_path = pg_catalog;");
      expect((await call(server, `/api/v2/licenses/${KEY}/schedule`)).status).toBe(200);
      await session.run("select current_user;");
      expect(session.output).toContain("postgres");
    } finally {
      await session.quit();
    }
  });

  it("ends a staff transaction the API waits on within a quarter of its deadline, and the API's request is answered", async () => {
    const session = new Psql(port);
    try {
      await session.run("begin; update public.license_keys set system_name = 'staff, uncommitted' where key = 'DEMO-0000-0000-0004';");
      // The session now holds its transaction open and sends nothing more: only the server ends it.
      expect((await setSystemName(server, "DEMO-0000-0000-0004", "api write")).status).toBe(200);
      // psql reads the server's FATAL when it next sends something.
      session.send("select 1;");
      await session.exited;
      expect(session.output).toContain("terminating connection due to idle-in-transaction timeout: the API needed the database");
      expect(server.logs()).toMatch(new RegExp(`"event":"sql_session_ended".*"graceMs":${DEADLINE_MS / 4}\\b`));
    } finally {
      await session.quit();
    }
  });

  it("never runs an API statement inside a staff transaction: the API's write outlives the staff's rollback", async () => {
    // The previous rule's transaction was rolled back; had the API's write run inside it, it would be gone too.
    expect(await psqlOnce(port, "select system_name from public.license_keys where key = 'DEMO-0000-0000-0004'")).toBe("api write");
  });

  it("serves the API while a session stays connected, idle, outside a transaction", async () => {
    const session = new Psql(port);
    try {
      await session.run("select 1;");
      const answers = await Promise.all(Array.from({ length: 20 }, () => call(server, "/api/v2/frequencies")));
      expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
      await session.run("select count(*) from public.kiosk_status;");
      expect(session.child.exitCode).toBeNull();
    } finally {
      await session.quit();
    }
  });

  it("leaks nothing when psql is killed mid-transaction: the API's next write is answered, descriptors and sessions as before", async () => {
    let before = Infinity;
    // The first round opens what PGlite keeps open for these tables; later ones must add nothing.
    for (let round = 0; round < 4; round++) {
      if (round === 1) before = descriptors(server);
      const session = new Psql(port);
      await session.run("begin; update public.license_keys set system_name = 'killed' where key = 'DEMO-0000-0000-0005';");
      session.child.kill("SIGKILL");
      await session.exited;
      expect((await setSystemName(server, "DEMO-0000-0000-0005", `after kill ${round}`)).status).toBe(200);
    }
    expect(await psqlOnce(port, "select system_name from public.license_keys where key = 'DEMO-0000-0000-0005'")).toBe("after kill 3");
    await until(() => descriptors(server) <= before);
  });
});

describe("Postgres' version: the embedded database is PostgreSQL 18.6 (PGlite 0.5.16)", () => {
  it("reports server_version 18.6, the version sql/README.md names", async () => {
    expect(await psqlOnce(port, "show server_version")).toBe("18.6");
    const readme = readFileSync(new URL("../../sql/README.md", import.meta.url), "utf8");
    expect(readme).toContain("PostgreSQL 18.6");
    expect(readme).toContain("PGlite 0.5.16");
  });
});

describe("framing, checked as Postgres checks it: no input stalls the API", () => {
  /** Sends `bytes` on a connection of its own; resolves with what the server sent once it closed. */
  async function refused(bytes: Uint8Array): Promise<Buffer> {
    const client = new WireClient(port);
    client.send(bytes);
    await client.ended;
    return client.received;
  }

  /** The catalogue (no database needed) answers 200 within the deadline. */
  async function apiAnswers() {
    const answer = await call(server, "/api/v2/frequencies");
    expect(answer.status).toBe(200);
    expect(answer.ms).toBeLessThan(DEADLINE_MS);
  }

  it("closes an SSLRequest that declares 0 bytes, and the API answers on", async () => {
    expect((await refused(int32s(0, SSL_REQUEST))).length).toBe(0);
    await apiAnswers();
  });

  it("closes a startup packet declaring under 8 or over 10,000 bytes without waiting for them", async () => {
    for (const declared of [-1, -(2 ** 31), 0, 4, 7, 10_005, 2 ** 31 - 1]) {
      expect((await refused(int32s(declared, 3 << 16))).length).toBe(0);
    }
    await apiAnswers();
  });

  it("closes a message declaring a negative length, or more than its type allows, after a normal startup", async () => {
    for (const bad of [message("Q", Buffer.alloc(0), -8), message("Q", Buffer.alloc(0), 3), message("S", Buffer.alloc(0), 10_001), message("P", Buffer.alloc(0), 2 ** 30)]) {
      const { client } = await authenticated(port, "postgres", PASSWORD);
      client.send(bad);
      await client.ended;
    }
    await apiAnswers();
  });

  it("cuts messages that arrive a byte at a time, or many in one chunk, exactly as declared", () => {
    const queue = new ByteQueue();
    const messages = Buffer.concat([query("select 1"), message("S"), query("select 2")]);
    for (const byte of messages.subarray(0, 7)) queue.push(Uint8Array.of(byte));
    expect("incomplete" in queue.message(SERVING_LIMITS)).toBe(true);
    queue.push(messages.subarray(7));
    const types = [];
    for (let frame = queue.message(SERVING_LIMITS); "type" in frame; frame = queue.message(SERVING_LIMITS)) types.push(frame.type);
    expect(types).toEqual(["Q", "S", "Q"]);
  });

  it("closes a CancelRequest without a key or with one over 256 bytes, and answers no CancelRequest, as Postgres answers none", async () => {
    for (const keyLength of [0, 257, 4]) {
      expect((await refused(Buffer.concat([int32s(12 + keyLength, 80877102, 12345), Buffer.alloc(keyLength)]))).length).toBe(0);
    }
    await apiAnswers();
  });

  it("answers an SSLRequest and a GSSENCRequest with N, then takes the startup packet", async () => {
    const client = new WireClient(port);
    try {
      client.send(int32s(8, SSL_REQUEST));
      await client.until((c) => c.received.length >= 1);
      client.send(int32s(8, GSSENC_REQUEST));
      await client.until((c) => c.received.length >= 2);
      expect(client.received.toString("latin1", 0, 2)).toBe("NN");
      client.received = client.received.subarray(2);
      client.send(startupPacket({ user: "postgres" }));
      const sasl = await client.message();
      expect(sasl?.type).toBe("R");
      expect(sasl?.body.readInt32BE(0)).toBe(10);
      expect(sasl?.body.subarray(4).toString()).toBe("SCRAM-SHA-256\0\0");
    } finally {
      client.destroy();
    }
  });

  it("refuses data sent behind an SSLRequest before its answer (08P01)", async () => {
    const received = await refused(Buffer.concat([int32s(8, SSL_REQUEST), startupPacket({ user: "postgres" })]));
    expect(received.toString("latin1", 0, 1)).toBe("N");
    expect(received.toString()).toContain("received unencrypted data after SSL request");
  });

  it("takes a second SSLRequest for protocol 1234.5679, which it does not serve (0A000)", async () => {
    const client = new WireClient(port);
    client.send(int32s(8, SSL_REQUEST));
    await client.until((c) => c.received.length >= 1);
    client.send(int32s(8, SSL_REQUEST));
    await client.ended;
    expect(client.received.toString()).toContain("unsupported frontend protocol 1234.5679: server supports 3.0 to 3.2");
  });

  it("refuses protocol 2.0 (0A000), and negotiates 3.5 down to 3.2, naming the _pq_ options it does not know", async () => {
    expect((await refused(int32s(8, 2 << 16))).toString()).toContain("unsupported frontend protocol 2.0: server supports 3.0 to 3.2");
    const client = new WireClient(port);
    try {
      client.send(startupPacket({ user: "postgres", "_pq_.compression": "on" }, (3 << 16) | 5));
      const negotiation = await client.message();
      expect(negotiation?.type).toBe("v");
      expect(negotiation?.body.readInt32BE(0)).toBe((3 << 16) | 2);
      expect(negotiation?.body.readInt32BE(4)).toBe(1);
      expect(negotiation?.body.subarray(8).toString()).toBe("_pq_.compression\0");
    } finally {
      client.destroy();
    }
  });

  it("refuses a startup packet without its terminator (08P01) or without a user (28000)", async () => {
    const unterminated = Buffer.concat([int32s(8 + 14, 3 << 16), Buffer.from("user\0postgres\0")]).subarray(0, 8 + 13);
    unterminated.writeInt32BE(unterminated.length, 0);
    expect(errorField((await refused(unterminated)).subarray(5), "C")).toBe("08P01");
    expect((await refused(startupPacket({ database: "postgres" }))).toString()).toContain("no PostgreSQL user name specified in startup packet");
  });

  it("refuses an unknown message type during authentication and after it (08P01)", async () => {
    const client = new WireClient(port);
    client.send(startupPacket({ user: "postgres" }));
    await client.message();
    client.send(query("select 1"));
    await client.ended;
    expect(client.received.toString()).toContain("expected SASL response, got message type 81");
    const { client: session } = await authenticated(port, "postgres", PASSWORD);
    session.send(message("Z"));
    await session.ended;
    expect(session.received.toString()).toContain("invalid frontend message type 90");
  });

  it("closes HTTP at its first bytes while 64 MB of it keep coming, and the API answers throughout", async () => {
    const client = new WireClient(port);
    const request = Buffer.from(`POST / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 67108864\r\n\r\n`);
    client.send(request);
    const chunk = Buffer.alloc(1024 * 1024, "x");
    const answers = [];
    for (let sent = 0; sent < 64 && !client.closed; sent++) {
      client.send(chunk);
      answers.push(await call(server, "/api/v2/frequencies"));
    }
    await client.ended;
    expect(answers.every((answer) => answer.status === 200 && answer.ms < DEADLINE_MS)).toBe(true);
    await apiAnswers();
  });

  it("closes a TLS ClientHello (direct SSL): the port has no TLS", async () => {
    expect((await refused(Buffer.from([0x16, 0x03, 0x01, 0x00, 0xf4, 0x01, 0x00, 0x00, 0xf0, 0x03, 0x03]))).length).toBe(0);
  });
});

describe("a password: SCRAM-SHA-256, as Postgres and Supabase's local database ask it", () => {
  it("computes RFC 7677's example exchange (user, pencil) to the byte", async () => {
    const encoder = new TextEncoder();
    const salt = Buffer.from("W22ZaJ0SNY7soEsUEjb6gQ==", "base64");
    const secret = await scramSecret("pencil", salt, 4096);
    const exchange = scramExchange({ user: "user", secret, mockNonce: new Uint8Array(32), serverNonce: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0" });
    expect(await exchange.step(encoder.encode("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"))).toEqual({
      continue: "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
    });
    expect(await exchange.step(encoder.encode("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))).toEqual({
      final: "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
    });
  });

  it("lets psql in with the URL the docs give, and with PGPASSWORD", async () => {
    const url = `postgresql://postgres:postgres@127.0.0.1:${port}/postgres`;
    const byUrl = await new Promise<string>((resolve) => {
      const child = spawn(`${PG_BIN}/psql`, ["-X", "-A", "-t", url, "-c", "select current_user"], { env: { ...process.env, PGPASSWORD: "" } });
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk));
      child.once("exit", () => resolve(output.trim()));
    });
    expect(byUrl).toBe("postgres");
    expect(await psqlOnce(port, "select current_user")).toBe("postgres");
  });

  it("refuses a wrong password with Postgres' own error (28P01), and asks one of a client that has none", async () => {
    const wrong = await psql(port, ["-c", "select 1"], { password: "wrong" });
    expect(wrong.code).not.toBe(0);
    expect(wrong.output).toContain('FATAL:  password authentication failed for user "postgres"');
    const none = await psql(port, ["-w", "-c", "select 1"], { password: "" });
    expect(none.output).toContain("no password supplied");
  });

  it("refuses a role that does not exist as it refuses a wrong password, after the same exchange with a salt of its own", async () => {
    const anon = await psql(port, ["-c", "select 1"], { user: "anon" });
    expect(anon.output).toContain('FATAL:  password authentication failed for user "anon"');
    const salts = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      const client = new WireClient(port);
      client.send(startupPacket({ user: "nobody" }));
      await client.message();
      const initial = Buffer.from("n,,n=,r=abcdefghijklmnop");
      client.send(message("p", Buffer.concat([Buffer.from("SCRAM-SHA-256\0"), int32s(initial.length), initial])));
      salts.push(/s=([^,]+)/.exec((await client.message())!.body.toString())![1]);
      client.destroy();
    }
    // Stable, as a stored salt would be: asking twice tells nobody the role is made up.
    expect(salts[0]).toBe(salts[1]);
  });

  it("lets postgres.js and node-postgres in, and refuses them a wrong password with 28P01", async () => {
    const sql = postgres(`postgresql://postgres:postgres@127.0.0.1:${port}/postgres`, { max: 1, onnotice: () => {} });
    try {
      expect(await sql`select ${41}::int + 1 as answer`).toEqual([{ answer: 42 }]);
    } finally {
      await sql.end();
    }
    const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", password: PASSWORD, database: "postgres" });
    await client.connect();
    try {
      expect((await client.query("select $1::text as echo", ["pg"])).rows).toEqual([{ echo: "pg" }]);
    } finally {
      await client.end();
    }
    const wrongJs = await postgres(`postgresql://postgres:nope@127.0.0.1:${port}/postgres`, { max: 1 })`select 1`.catch((error) => error);
    expect(wrongJs.code).toBe("28P01");
    const wrongPg = await new pg.Client({ host: "127.0.0.1", port, user: "postgres", password: "nope", database: "postgres" }).connect().catch((error) => error);
    expect(wrongPg.code).toBe("28P01");
  });

  it("refuses a database other than postgres (3D000)", async () => {
    const { output } = await new Promise<{ output: string }>((resolve) => {
      const child = spawn(`${PG_BIN}/psql`, ["-X", `postgresql://postgres:postgres@127.0.0.1:${port}/other`, "-c", "select 1"]);
      let output = "";
      child.stderr.on("data", (chunk: Buffer) => (output += chunk));
      child.once("exit", () => resolve({ output }));
    });
    expect(output).toContain('FATAL:  database "other" does not exist');
  });

  it("refuses malformed SCRAM messages with 08P01: channel binding it cannot honour, a nonce not its own", async () => {
    const send = async (first: string, final?: string) => {
      const client = new WireClient(port);
      client.send(startupPacket({ user: "postgres" }));
      await client.message();
      const initial = Buffer.from(first);
      client.send(message("p", Buffer.concat([Buffer.from("SCRAM-SHA-256\0"), int32s(initial.length), initial])));
      if (final) {
        await client.message();
        client.send(message("p", Buffer.from(final)));
      }
      await client.ended;
      return client.received.toString();
    };
    expect(await send("p=tls-server-end-point,,n=,r=abc")).toContain("malformed SCRAM message");
    expect(await send("n,,n=,r=abc", "c=biws,r=someone-else,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")).toContain("Nonce does not match.");
  });
});

describe("COPY FROM STDIN and COPY TO STDOUT, with the API unaffected", () => {
  beforeAll(async () => {
    await psqlOnce(port, "create table public.staff_import (id int primary key, note text)");
  });

  it("recognises COPY ... FROM STDIN as a query of its own, and nothing that merely mentions one", () => {
    expect(copyFromStdin("COPY public.staff_import (id, note) FROM stdin;")).toEqual({ binary: false, columns: 2 });
    expect(copyFromStdin("-- data\ncopy staff_import from STDIN with (format binary)")).toEqual({ binary: true, columns: 0 });
    expect(copyFromStdin("COPY staff_import FROM STDIN CSV HEADER")).toEqual({ binary: false, columns: 0 });
    expect(copyFromStdin("select 'copy t from stdin'")).toBeUndefined();
    expect(copyFromStdin("select 1; copy t from stdin")).toBeUndefined();
    expect(copyFromStdin("copy t to stdout")).toBeUndefined();
    expect(copyFromStdin("copy (select 1) to stdout")).toBeUndefined();
    expect(copyFromStdin("/* copy t from stdin */ select $$copy t from stdin$$")).toBeUndefined();
  });

  it("loads rows with psql's \\copy from stdin", async () => {
    const { code, output } = await psql(port, ["-c", "\\copy public.staff_import from stdin"], { input: "1\tone\n2\ttwo\n" });
    expect({ code, output }).toEqual({ code: 0, output: "COPY 2" });
  });

  it("runs a pg_dump file with psql -f: COPY ... FROM stdin, its data, \\.", async () => {
    const file = join(dataDir, "dump.sql");
    writeFileSync(file, "--\n-- Data for Name: staff_import; Type: TABLE DATA\n--\n\nCOPY public.staff_import (id, note) FROM stdin;\n3\tthree\n4\tfour\n\\.\n\nselect count(*) from public.staff_import;\n");
    const { code, output } = await psql(port, ["-f", file]);
    expect({ code, output }).toEqual({ code: 0, output: "COPY 2\n4" });
  });

  it("reads a table with COPY TO STDOUT", async () => {
    expect(await psqlOnce(port, "copy (select id, note from public.staff_import order by id) to stdout")).toBe("1\tone\n2\ttwo\n3\tthree\n4\tfour");
  });

  it("loads binary COPY data, and rolls it back with the transaction it was in", async () => {
    const file = join(dataDir, "rows.bin");
    await psqlOnce(port, `\\copy (select id + 10, note from public.staff_import) to '${file}' with (format binary)`);
    const { output } = await psql(port, ["-c", "begin", "-c", `\\copy public.staff_import from '${file}' with (format binary)`, "-c", "select count(*) from public.staff_import", "-c", "rollback"]);
    expect(output).toBe("BEGIN\nCOPY 4\n8\nROLLBACK");
    expect(await psqlOnce(port, "select count(*) from public.staff_import")).toBe("4");
  });

  it("refuses COPY FROM STDIN inside a multi-statement query or through the extended protocol, saying how to send it", async () => {
    const { code, output } = await psql(port, ["-c", "select 1; copy public.staff_import from stdin"]);
    expect(code).not.toBe(0);
    expect(output).toContain("takes COPY FROM STDIN only as a query of its own");
    const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", password: PASSWORD, database: "postgres" });
    await client.connect();
    try {
      const error = await client.query({ text: "copy public.staff_import from stdin", queryMode: "extended" } as pg.QueryConfig).catch((error) => error);
      expect(error.message).toContain("takes COPY FROM STDIN only as a query of its own");
      expect((await client.query("select count(*)::int as n from public.staff_import")).rows).toEqual([{ n: 4 }]);
    } finally {
      await client.end();
    }
  });

  it("refuses more than 64 MB of COPY data with a clear error, and the session goes on", async () => {
    const { client } = await authenticated(port, "postgres", PASSWORD);
    try {
      client.send(query("copy public.staff_import from stdin"));
      expect((await client.message())?.type).toBe("G");
      client.send(message("d", Buffer.alloc(65 * 1024 * 1024, "9")));
      client.send(message("c"));
      const answers = await client.through("Z");
      expect(errorField(answers.find((answer) => answer.type === "E")!.body, "M")).toContain("more than 64 MB of data");
      client.send(query("select count(*) from public.staff_import"));
      expect((await client.through("Z")).some((answer) => answer.type === "D" && answer.body.toString().endsWith("4"))).toBe(true);
    } finally {
      client.destroy();
    }
  });

  it("answers the API, fresh, while a COPY's data is still coming", async () => {
    const session = spawn(`${PG_BIN}/psql`, ["-X", "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "postgres", "-c", "\\copy public.staff_import from stdin"], {
      env: { ...process.env, PGPASSWORD: PASSWORD },
    });
    let output = "";
    session.stdout.on("data", (chunk: Buffer) => (output += chunk));
    const exited = new Promise((resolve) => session.once("exit", resolve));
    session.stdin.write("5\tfive\n");
    const read = await call(server, `/api/v2/licenses/${KEY}/schedule`);
    expect(read.status).toBe(200);
    expect(read.age).toBeNull();
    session.stdin.end("6\tsix\n\\.\n");
    await exited;
    expect(output.trim()).toBe("COPY 2");
  });
});

describe("psql's Ctrl-C: a staff statement stops within a second, and never holds the API past its deadline", () => {
  let staff: Psql;
  let bystander: Psql;
  /**
   * One psql run (start, connect, a statement) before the database is held: a Ctrl-C is psql
   * connecting again to send its cancel, which a busy machine slows as much (1.7 s beside two
   * CPU-bound processes and another suite).
   */
  let psqlRunMs: number;

  beforeAll(async () => {
    const started = performance.now();
    await psqlOnce(port, "create table public.cancel_check (id int); insert into public.cancel_check values (1)");
    psqlRunMs = performance.now() - started;
    // Last known good answers for the reads below.
    expect((await call(server, `/api/v2/licenses/${KEY}/schedule`)).status).toBe(200);
    expect((await call(server, "/api/v2/frequencies")).status).toBe(200);
    bystander = new Psql(port);
    await bystander.run("select 1;");
    staff = new Psql(port);
    await staff.run("select 1;");
    staff.send("begin; insert into public.cancel_check values (2); select pg_sleep(60);");
  });
  afterAll(async () => {
    await staff?.quit();
    await bystander?.quit();
  });

  it("answers a kiosk read within the deadline from its last known good answer while the statement holds the database", async () => {
    // Fresh answers until the statement reaches the database; from then on, the last known good one.
    let read = await call(server, `/api/v2/licenses/${KEY}/schedule`);
    while (read.age === null) read = await call(server, `/api/v2/licenses/${KEY}/schedule`);
    expect(read.status).toBe(200);
    expect(read.ms).toBeLessThan(DEADLINE_MS * 1.5);
  });

  it("answers the routes that need no database at once meanwhile", async () => {
    for (const path of ["/api/v2/frequencies", "/api/v2/openapi.json"]) {
      const answer = await call(server, path);
      expect(answer.status).toBe(200);
      expect(answer.ms).toBeLessThan(DEADLINE_MS);
    }
  });

  it("ends the statement within a second of psql's Ctrl-C, over what a psql run takes on this machine", async () => {
    const started = performance.now();
    staff.child.kill("SIGINT");
    await staff.printed("canceling statement due to user request");
    expect(performance.now() - started).toBeLessThan(1_000 + psqlRunMs);
    // psql reading a script (here, its stdin) stops at a Ctrl-C; at a terminal it would prompt again.
    await staff.exited;
  });

  it("keeps what was committed and drops the cancelled transaction, as Postgres' crash recovery does", async () => {
    expect(await psqlOnce(port, "select string_agg(id::text, ',') from public.cancel_check")).toBe("1");
  });

  it("ends the other sessions, whose backend it replaced (57P01), and psql connects again", async () => {
    bystander.send("select 2;");
    await bystander.exited;
    expect(bystander.output).toContain("terminating connection because the embedded database restarted to cancel another session's statement");
    expect(await psqlOnce(port, "select 3")).toBe("3");
    expect(server.logs()).toContain('"event":"embedded_database_restarted","reason":"a staff statement was cancelled (psql\'s Ctrl-C)"');
  });

  it("answers fresh again once the database is back", async () => {
    await until(async () => (await call(server, `/api/v2/licenses/${KEY}/schedule`)).age === null);
  });

  it("keeps the cancelled session: its next query is answered, as after Postgres' cancel", async () => {
    const { client, processId, secret } = await authenticated(port, "postgres", PASSWORD);
    try {
      client.send(query("select pg_sleep(60)"));
      let read = await call(server, `/api/v2/licenses/${KEY}/schedule`);
      while (read.age === null) read = await call(server, `/api/v2/licenses/${KEY}/schedule`);
      const cancel = new WireClient(port);
      cancel.send(Buffer.concat([int32s(12 + secret.length, 80877102, processId), secret]));
      await cancel.ended;
      const cancelled = await client.through("Z");
      expect(cancelled.map((answer) => answer.type)).toEqual(["E", "Z"]);
      expect(errorField(cancelled[0].body, "C")).toBe("57014");
      client.send(query("select 6 * 7"));
      expect((await client.through("Z")).find((answer) => answer.type === "D")?.body.toString()).toContain("42");
    } finally {
      client.destroy();
    }
  });
});

describe("connection floods", () => {
  it("refuses connections past its cap with Postgres' 53300, and serves again once they close", async () => {
    const held = Array.from({ length: 200 }, () => new WireClient(port));
    try {
      await Promise.all(held.map((client) => new Promise((resolve) => client.socket.once("connect", resolve))));
      const extra = new WireClient(port);
      await extra.ended;
      expect(extra.received.toString()).toContain("sorry, too many clients already");
    } finally {
      for (const client of held) client.destroy();
    }
    await until(async () => (await psql(port, ["-c", "select 1"])).output === "1");
  });

  describe("past the descriptor limit", () => {
    /** Low enough for a flood to exhaust it before the port's cap on connections, high enough for PGlite's own (about 150 descriptors). */
    const LIMIT = 256;
    let flooded: RunningServer;

    beforeAll(async () => {
      flooded = await startServer({ DATA_DIR: pgliteDataDir(join(dataDir, "flooded")) }, undefined, { ulimit: { soft: LIMIT } });
    });
    afterAll(() => flooded?.stop());

    it("accepts again once the flood ends, and logs the accepts that failed", async () => {
      const floodPort = flooded.sqlPort!;
      const flood = Array.from({ length: LIMIT }, () => new WireClient(floodPort));
      try {
        await until(() => /accept failed: Too many open files/.test(flooded.logs()));
      } finally {
        for (const client of flood) client.destroy();
      }
      await until(async () => (await psql(floodPort, ["-c", "select 1"])).output === "1");
    });
  });
});

describe("a port already in use", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(() => database?.drop());

  it("stops the server with one line naming SQL_PORT, before opening PGlite, no stack trace", async () => {
    const error = await startServer({ DATA_DIR: join(dataDir, "second"), SQL_PORT: String(port) }).then(() => undefined, (error: Error) => error);
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

describe("what the port drops is logged, with its reason", () => {
  it("names each reason, counts repeats, and never writes [object Object]", async () => {
    const logged = await startServer({ DATA_DIR: pgliteDataDir(join(dataDir, "logged")) });
    try {
      const sqlPort = logged.sqlPort!;
      for (const bytes of [int32s(0, SSL_REQUEST), int32s(0, SSL_REQUEST), Buffer.from("GET / HTTP/1.1\r\n\r\n")]) {
        const client = new WireClient(sqlPort);
        client.send(bytes);
        await client.ended;
      }
      await psql(sqlPort, ["-c", "select 1"], { password: "wrong" });
    } finally {
      // Counted drops are written at the latest when the port closes.
      await logged.stop();
    }
    const lines = logged.logs().split("\n").filter((line) => line.includes("sql_connection"));
    const text = lines.join("\n");
    expect(text).toContain('"event":"sql_connection_dropped","reason":"invalid length of startup packet"');
    expect(text).toMatch(/"event":"sql_connections_dropped","reasons":\{.*"invalid length of startup packet":2/);
    expect(text).toContain('password authentication failed for user \\"postgres\\"');
    expect(text).not.toContain("[object Object]");
  });
});

describe("a protocol fuzzer: random and mutated frontend messages, floods; the API answers throughout", () => {
  const types = [..."QPBEDCHSFXdcfpZ", "\0", "\x16"];
  const lengths = fc.oneof(
    fc.constantFrom(-(2 ** 31), -1, 0, 3, 4, 5, 10_000, 10_001, 2 ** 30, 2 ** 31 - 1),
    fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  );
  const bytes = fc.uint8Array({ maxLength: 256 });
  const templates = [
    query("select 1"),
    query("copy public.fuzz_copy from stdin"),
    message("P", Buffer.from("\0select $1::int\0\0\0")),
    message("B", Buffer.concat([Buffer.from("\0\0"), Buffer.from([0, 0, 0, 1, 0, 0, 0, 1]), int32s(1), Buffer.from("7"), Buffer.from([0, 0])])),
    message("E", Buffer.from("\0\0\0\0\0")),
    message("S"),
    message("d", Buffer.from("1\n")),
    message("c"),
    message("f", Buffer.from("stop\0")),
  ];
  /** A frontend message of any type and declared length, or a real one with its bytes mutated. */
  const frontendMessage = fc.oneof(
    fc.record({ type: fc.constantFrom(...types), declared: lengths, body: bytes }).map(({ type, declared, body }) =>
      // A function call's OID kept clear of real functions (pg_sleep among them): what it calls is not the point.
      message(type, type === "F" ? Buffer.concat([Buffer.from([0x7f]), body]) : body, declared)
    ),
    fc.record({ template: fc.constantFrom(...templates), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }).map(({ template, at, value }) => {
      const mutated = Buffer.from(template);
      mutated[at % mutated.length] = value;
      return mutated;
    }),
    fc.constantFrom(...templates),
  );
  /** What arrives before authentication: packets of every code and length, HTTP, TLS, noise. */
  const preAuthentication = fc.oneof(
    fc.record({ declared: lengths, code: fc.constantFrom(SSL_REQUEST, GSSENC_REQUEST, 80877102, 3 << 16, (3 << 16) | 2, 2 << 16, 0), body: bytes })
      .map(({ declared, code, body }) => Buffer.concat([int32s(declared, code), body])),
    fc.constantFrom(
      startupPacket({ user: "postgres" }),
      Buffer.from("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"),
      Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]),
    ),
    bytes,
  );
  const fuzzCase = fc.oneof(
    fc.record({ kind: fc.constant("pre-authentication" as const), payloads: fc.array(preAuthentication, { minLength: 1, maxLength: 3 }) }),
    fc.record({ kind: fc.constant("authenticated" as const), payloads: fc.array(frontendMessage, { minLength: 1, maxLength: 8 }) }),
    fc.record({ kind: fc.constant("flood" as const), payloads: fc.array(preAuthentication, { minLength: 20, maxLength: 60 }) }),
  );
  /** How long a fuzzed connection is given to be answered or closed; one still waiting (for bytes it was promised) is then closed by the fuzzer. */
  const SETTLE_MS = 200;

  async function settle(client: WireClient, expectReady: boolean) {
    const timer = new Promise<void>((resolve) => setTimeout(resolve, SETTLE_MS));
    await Promise.race([client.ended, timer, expectReady ? client.until((c) => c.received.includes(Buffer.from("Z\0\0\0\x05"))) : timer]);
    client.destroy();
  }

  it("keeps the catalogue answering 200 within the deadline throughout, and psql works after", async () => {
    await psqlOnce(port, "create table public.fuzz_copy (line text)");
    const answers: Array<{ status: number; ms: number }> = [];
    let fuzzing = true;
    const watching = (async () => {
      while (fuzzing) answers.push(await call(server, "/api/v2/frequencies").catch(() => ({ status: 0, ms: Infinity })));
    })();
    try {
      await fc.assert(
        fc.asyncProperty(fuzzCase, async ({ kind, payloads }) => {
          if (kind === "authenticated") {
            const { client } = await authenticated(port, "postgres", PASSWORD);
            for (const payload of payloads) client.send(payload);
            client.send(Buffer.concat([message("S"), query("select 1")]));
            await settle(client, true);
            return;
          }
          const clients = (kind === "flood" ? payloads : [Buffer.concat(payloads)]).map((payload) => {
            const client = new WireClient(port);
            client.send(payload);
            return client;
          });
          await Promise.all(clients.map((client) => settle(client, false)));
        }),
        { numRuns: 150 },
      );
    } finally {
      fuzzing = false;
      await watching;
    }
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.filter((answer) => answer.status !== 200 || answer.ms >= DEADLINE_MS)).toEqual([]);
    await until(async () => (await psql(port, ["-c", "select 42"])).output === "42");
  });
});
