import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv } from "../support/child-env.ts";
import { type RunningServer, startServer } from "../support/server.ts";

/**
 * The staff role of `npm start`'s local PostgreSQL (functions/app/db/local-postgres.ts,
 * sql/staff-sessions.sql), against the real entry: the password that opens it, the loopback
 * listener, one database shared with the API, and sessions limited so kiosks never wait on staff.
 */

/** A demo key with a schedule (supabase/seed.sql): the kiosk read every load is measured with. */
const KIOSK_KEY = "DEMO-0000-0000-0001";
/** Another key of the same account, whose system name the API sets for staff to read. */
const NAMED_KEY = "DEMO-0000-0000-0002";
/** A staff statement that runs until it is cancelled, within the role's statement_timeout. */
const SLEEP = "select pg_sleep(30)";
/** Kiosk reads made during each staff load. */
const READS = 20;
/** The staff role's session limit (sql/staff-sessions.sql). */
const CONNECTION_LIMIT = 20;
/**
 * The API's database deadline in this server: five times the default, so a busy machine's slow
 * statement is not taken for a stall and answered from the last known good (an `age` header).
 */
const DEADLINE_MS = "10000";

const staffSql = readFileSync(new URL("../../sql/staff-sessions.sql", import.meta.url), "utf8");

let dataDir: string;
let server: RunningServer;
let port: number;
let staffPassword: string;
let apiPassword: string;
/** The API's own login (`postgres`), used only to watch staff sessions from outside their role's limit. */
let observer: pg.Client;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "cadence-staff-sessions-"));
  server = await startServer({ DATA_DIR: dataDir, CATALOGUE_TTL_MS: "0", TRUST_PROXY: "true", DATABASE_DEADLINE_MS: DEADLINE_MS });
  port = server.sqlPort!;
  staffPassword = readFileSync(join(dataDir, "sql-password"), "utf8").trim();
  apiPassword = readFileSync(join(dataDir, "api-password"), "utf8").trim();
  observer = await session("postgres", apiPassword);
});

afterAll(async () => {
  await observer?.end().catch(() => {});
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A connected session on the local server (node-postgres), its late errors heard; end it with `end()`. */
async function session(user: string, password: string, onPort = port): Promise<pg.Client> {
  const client = new pg.Client({ host: "127.0.0.1", port: onPort, user, password, database: "postgres" });
  // A session the server ends while it is idle reports that as an `error` event: heard here, and
  // awaited by the test that expects it.
  client.on("error", () => {});
  await client.connect();
  return client;
}

/** A staff session, as `work` uses it; ended whatever `work` does. */
async function asStaff<T>(work: (staff: pg.Client) => Promise<T>): Promise<T> {
  const staff = await session("staff", staffPassword);
  try {
    return await work(staff);
  } finally {
    await staff.end().catch(() => {});
  }
}

/** The SQLSTATE with which a login as `user` with `password` is refused, or "connected". */
async function loginOutcome(user: string, password: string, onPort = port): Promise<string> {
  try {
    const client = await session(user, password, onPort);
    await client.end();
    return "connected";
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

/**
 * psql as staff type it: `sh -c` runs `line` with these arguments appended, `env` added to a bare
 * environment (no ~/.pgpass: PGPASSFILE is /dev/null). Its exit code and everything it printed.
 */
function shell(line: string, env: Record<string, string> = {}): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", line], { env: childEnv({ PGPASSFILE: "/dev/null", ...env }), stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code: code ?? -1, output: output.trim() }));
  });
}

/** psql's options for one statement, unaligned, tuples only, never prompting, stopping at an error. */
const psqlStatement = (sql: string) => `-X -A -t -w -v ON_ERROR_STOP=1 -c "${sql}"`;

/** One statement through psql as `user`, with PGPASSWORD `password` (the staff password by default; none when null). */
function psql(sql: string, { user = "staff", password = staffPassword as string | null } = {}) {
  return shell(`psql -h 127.0.0.1 -p ${port} -U ${user} postgres ${psqlStatement(sql)}`, password === null ? {} : { PGPASSWORD: password });
}

/** The `psql` line of the server's `listening` log line: what staff are told to paste. */
function printedPsqlLine(running: RunningServer): string {
  const line = running.logs().split("\n").find((text) => text.includes('"event":"listening"'));
  return JSON.parse(line!).psql;
}

/** Whether a TCP connection to `host`:`port` is accepted. */
function accepts(host: string, onPort: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port: onPort });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Polls `condition` every 50 ms; the test's own timeout bounds the wait. */
async function until(condition: () => Promise<boolean>) {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** The server process of `client`'s session. */
async function backendPid(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ pid: number }>("select pg_backend_pid() as pid");
  return rows[0].pid;
}

/** What the server says backend `pid` is doing (pg_stat_activity), or undefined once it is gone. */
async function activityOf(pid: number): Promise<{ state: string | null; query: string } | undefined> {
  const { rows } = await observer.query<{ state: string | null; query: string }>("select state, query from pg_catalog.pg_stat_activity where pid = $1", [pid]);
  return rows[0];
}

/** Whether backend `pid` is running `sql` now. */
async function runs(pid: number, sql: string): Promise<boolean> {
  const activity = await activityOf(pid);
  return activity?.state === "active" && activity.query === sql;
}

/** The staff role's sessions open now. */
async function staffSessions(): Promise<number> {
  const { rows } = await observer.query<{ count: number }>("select count(*)::int as count from pg_catalog.pg_stat_activity where usename = 'staff'");
  return rows[0].count;
}

let clientNumber = 0;
/** A request from a client address of its own (the server trusts X-Forwarded-For), so no rate limit answers in the API's place. */
async function call(path: string, init: RequestInit = {}) {
  clientNumber += 1;
  const headers = new Headers(init.headers);
  headers.set("x-forwarded-for", `10.77.${(clientNumber >> 8) & 255}.${clientNumber & 255}`);
  const response = await fetch(server.url + path, { ...init, headers });
  return { status: response.status, age: response.headers.get("age"), body: await response.text() };
}

/**
 * One kiosk schedule read: its status, and its `age`, which the API sets only on an answer it kept
 * from before (the database did not answer within its deadline). Each read asks the database.
 */
async function kioskRead(): Promise<{ status: number; age: string | null }> {
  const { status, age } = await call(`/api/v2/licenses/${KIOSK_KEY}/schedule`);
  return { status, age };
}

/** `count` kiosk reads, one after another. */
async function kioskReads(count = READS) {
  const answers = [];
  for (let read = 0; read < count; read++) answers.push(await kioskRead());
  return answers;
}

/** Every read answered 200 by the database itself. */
const answeredFresh = (count = READS) => Array.from({ length: count }, () => ({ status: 200, age: null }));

describe("The staff password", () => {
  it("is generated at a first start into DATA_DIR/sql-password, beside the API's DATA_DIR/api-password, each readable by its owner alone (0600)", () => {
    expect(statSync(join(dataDir, "sql-password")).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, "api-password")).mode & 0o777).toBe(0o600);
    expect(staffPassword.length).toBeGreaterThanOrEqual(24);
  });

  it("opens the server to the psql line the server prints, as staff", async () => {
    const line = printedPsqlLine(server);
    expect(line).toBe(`PGPASSWORD="$(cat '${join(dataDir, "sql-password")}')" psql -h 127.0.0.1 -p ${port} -U staff postgres`);
    expect(await shell(`${line} ${psqlStatement("select current_user")}`)).toEqual({ code: 0, output: "staff" });
  });

  it("refuses postgres/postgres and staff with a wrong password (28P01), and asks a password of a client without one", async () => {
    expect(await loginOutcome("postgres", "postgres")).toBe("28P01");
    expect(await loginOutcome("staff", `${staffPassword}x`)).toBe("28P01");
    const wrong = await psql("select 1", { password: "postgres" });
    expect(wrong.code).not.toBe(0);
    expect(wrong.output).toContain('password authentication failed for user "staff"');
    const none = await psql("select 1", { password: null });
    expect(none.code).not.toBe(0);
    expect(none.output).toContain("no password supplied");
  });

  it("is not the postgres role's password: the API's is its own, and the staff password does not open postgres", async () => {
    expect(apiPassword).not.toBe(staffPassword);
    expect(await loginOutcome("postgres", staffPassword)).toBe("28P01");
    expect(await loginOutcome("postgres", apiPassword)).toBe("connected");
  });

  it("is never printed: neither password appears in the server's output", () => {
    expect(server.logs()).not.toContain(staffPassword);
    expect(server.logs()).not.toContain(apiPassword);
  });

  it("is SQL_PASSWORD when set: that password opens the server, is written into DATA_DIR/sql-password and is never printed", async () => {
    // Quotes, a backslash and a space: the password reaches ALTER ROLE and the shell as given.
    const password = `it's a "staff" \\ pass ${randomBytes(6).toString("hex")}`;
    const otherDir = mkdtempSync(join(tmpdir(), "cadence-staff-password-"));
    let other: RunningServer | undefined;
    try {
      other = await startServer({ DATA_DIR: otherDir, SQL_PASSWORD: password });
      expect(readFileSync(join(otherDir, "sql-password"), "utf8")).toBe(`${password}\n`);
      expect(statSync(join(otherDir, "sql-password")).mode & 0o777).toBe(0o600);
      expect(await shell(`${printedPsqlLine(other)} ${psqlStatement("select current_user")}`)).toEqual({ code: 0, output: "staff" });
      expect(await loginOutcome("staff", password, other.sqlPort)).toBe("connected");
      expect(await loginOutcome("staff", staffPassword, other.sqlPort)).toBe("28P01");
      // Its whole output, the stop's lines included.
      await other.stop();
      expect(other.logs()).not.toContain(password);
    } finally {
      await other?.stop();
      rmSync(otherDir, { recursive: true, force: true });
    }
  });
});

describe("The listener", () => {
  it("accepts connections on 127.0.0.1 and refuses them on another address of this host (127.0.0.2)", async () => {
    expect(await accepts("127.0.0.1", port)).toBe(true);
    expect(await accepts("127.0.0.2", port)).toBe(false);
  });

  it("is configured with listen_addresses 127.0.0.1 and no Unix socket (unix_socket_directories empty)", async () => {
    // Asked as postgres: showing unix_socket_directories needs pg_read_all_settings, which staff's login has not.
    expect((await observer.query("show listen_addresses")).rows).toEqual([{ listen_addresses: "127.0.0.1" }]);
    expect((await observer.query("show unix_socket_directories")).rows).toEqual([{ unix_socket_directories: "" }]);
  });
});

describe("One database for staff and the API", () => {
  it("serves in GET /api/v2/categories a category staff renamed with psql", async () => {
    const renamed = `Affirmations, renamed by staff ${randomBytes(4).toString("hex")}`;
    try {
      expect((await psql(`update public.categories set name = '${renamed}' where id = 1`)).code).toBe(0);
      const { status, body } = await call("/api/v2/categories");
      expect(status).toBe(200);
      expect(JSON.parse(body)).toContainEqual({ id: 1, name: renamed, sortOrder: 1 });
    } finally {
      await observer.query("update public.categories set name = 'Affirmations' where id = 1");
    }
  });

  it("shows staff in psql a system name set through PUT /api/v2/licenses/{licenseKey}/system-name", async () => {
    const name = `front desk ${randomBytes(4).toString("hex")}`;
    const put = await call(`/api/v2/licenses/${NAMED_KEY}/system-name`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ systemName: name }),
    });
    expect(put.status).toBe(200);
    expect(await psql(`select system_name from public.license_keys where key = '${NAMED_KEY}'`)).toEqual({ code: 0, output: name });
  });
});

describe("Kiosks while staff work: every kiosk read is answered 200 by the database", () => {
  it("while a staff session sits idle in a transaction", async () => {
    await asStaff(async (staff) => {
      const pid = await backendPid(staff);
      await staff.query("begin");
      await staff.query("select pg_sleep(0.1), count(*) from public.license_keys");
      expect((await activityOf(pid))?.state).toBe("idle in transaction");
      const answers = await kioskReads();
      expect((await activityOf(pid))?.state).toBe("idle in transaction");
      expect(answers).toEqual(answeredFresh());
    });
  });

  it("while a staff statement runs select pg_sleep(30)", async () => {
    await asStaff(async (staff) => {
      const pid = await backendPid(staff);
      const sleeping = staff.query(SLEEP).then(() => "finished", (error) => error.code);
      await until(() => runs(pid, SLEEP));
      const answers = await kioskReads();
      // Cancelled only now, and still running (57014, not a result): it ran throughout the reads.
      expect((await observer.query("select pg_cancel_backend($1) as cancelled", [pid])).rows).toEqual([{ cancelled: true }]);
      expect(await sleeping).toBe("57014");
      expect(answers).toEqual(answeredFresh());
    });
  });

  it(`while staff hold the role's ${CONNECTION_LIMIT} sessions, a ${CONNECTION_LIMIT + 1}st being refused with too many connections for role`, async () => {
    // The sessions of earlier tests are gone: each of the twenty counts against the limit.
    await until(async () => (await staffSessions()) === 0);
    const sessions: pg.Client[] = [];
    try {
      for (let opened = 0; opened < CONNECTION_LIMIT; opened++) sessions.push(await session("staff", staffPassword));
      const refused = await session("staff", staffPassword).then(
        async (extra) => {
          await extra.end();
          return { code: "connected", message: "" };
        },
        (error: { code?: string; message: string }) => ({ code: error.code, message: error.message }),
      );
      expect(refused).toEqual({ code: "53300", message: 'too many connections for role "staff"' });
      const answers = await kioskReads();
      expect(await staffSessions()).toBe(CONNECTION_LIMIT);
      expect(answers).toEqual(answeredFresh());
    } finally {
      await Promise.all(sessions.map((staff) => staff.end().catch(() => {})));
    }
  });

  it(`while staff cancel a running statement ${READS} times over`, async () => {
    await asStaff((canceller) =>
      asStaff(async (staff) => {
        const pid = await backendPid(staff);
        const answers = [];
        for (let round = 0; round < READS; round++) {
          // Each round's text its own: the previous round's statement may still show as active
          // (its error sent, its abort under way), and a cancel sent then would reach no statement.
          const statement = `${SLEEP}, ${round} as round`;
          const sleeping = staff.query(statement).then(() => "finished", (error) => error.code);
          await until(() => runs(pid, statement));
          answers.push(await kioskRead());
          expect((await canceller.query("select pg_cancel_backend($1) as cancelled", [pid])).rows).toEqual([{ cancelled: true }]);
          expect(await sleeping).toBe("57014");
        }
        expect(answers).toEqual(answeredFresh());
      })
    );
  });
});

describe("The staff role's limits, as sql/staff-sessions.sql sets them", () => {
  it.each([
    ["statement_timeout", "60s", "1min"],
    ["idle_in_transaction_session_timeout", "60s", "1min"],
    ["lock_timeout", "3s", "3s"],
    ["work_mem", "16MB", "16MB"],
    ["temp_file_limit", "2GB", "2GB"],
  ])("sets %s to %s for every staff session (show: %s)", async (setting, written, shown) => {
    expect(staffSql).toContain(`alter role staff set ${setting} = '${written}';`);
    await asStaff(async (staff) => {
      expect((await staff.query(`show ${setting}`)).rows).toEqual([{ [setting]: shown }]);
    });
    // A login as postgres, the API's role, is not under the staff role's settings.
    expect((await observer.query(`show ${setting}`)).rows).not.toEqual([{ [setting]: shown }]);
  });

  it(`allows the role ${CONNECTION_LIMIT} sessions at once`, async () => {
    expect(staffSql).toContain(`alter role staff connection limit ${CONNECTION_LIMIT};`);
    const { rows } = await observer.query("select rolconnlimit from pg_catalog.pg_roles where rolname = 'staff'");
    expect(rows).toEqual([{ rolconnlimit: CONNECTION_LIMIT }]);
  });

  it("ends a staff session left idle in a transaction (25P03)", async () => {
    const staff = await session("staff", staffPassword);
    try {
      const pid = await backendPid(staff);
      const ended = new Promise<{ code?: string; message: string }>((resolve) => staff.once("error", resolve));
      const closed = new Promise<void>((resolve) => staff.once("end", resolve));
      // One second instead of the role's minute, in this session alone, so the test waits a second.
      await staff.query("set idle_in_transaction_session_timeout = '1s'");
      await staff.query("begin");
      await staff.query("select count(*) from public.license_keys");
      const error = await ended;
      expect(error.code).toBe("25P03");
      expect(error.message).toContain("idle-in-transaction timeout");
      await closed;
      expect(await activityOf(pid)).toBeUndefined();
    } finally {
      await staff.end().catch(() => {});
    }
  });

  it("lets staff read and write every row of the tables, as the dashboard does, row-level security aside", async () => {
    await asStaff(async (staff) => {
      const { rows } = await staff.query<{ keys: number }>("select count(*)::int as keys from public.license_keys");
      expect(rows[0].keys).toBeGreaterThan(0);
      await staff.query("begin");
      const updated = await staff.query("update public.license_keys set alerts_muted = not alerts_muted");
      expect(updated.rowCount).toBe(rows[0].keys);
      await staff.query("rollback");
    });
  });

  it("never gives staff the superuser's rights: no set role postgres, no program run by the server, no limit lifted for good", async () => {
    await asStaff(async (staff) => {
      expect((await staff.query("select rolsuper from pg_roles where rolname = current_user")).rows).toEqual([{ rolsuper: false }]);
      await expect(staff.query("set role postgres")).rejects.toMatchObject({ code: "42501" });
      await expect(staff.query("copy (select 1) to program 'true'")).rejects.toMatchObject({ code: "42501" });
      await expect(staff.query("set temp_file_limit = -1")).rejects.toMatchObject({ code: "42501" });
      await expect(staff.query("alter role staff connection limit -1")).rejects.toMatchObject({ code: "42501" });
    });
  });
});
