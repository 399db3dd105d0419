import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import process from "node:process";
import pg from "pg";
import { ConfigError } from "../config-error.ts";
import { PortInUseError } from "../http/port-in-use.ts";
import type { Logger } from "../log.ts";
import { errorMessage } from "../log.ts";
import { type DataDirLock, lockDataDir } from "./data-dir-lock.ts";
import { postgresBinaries } from "./postgres-binaries.ts";
import { namespaceRefused, unprivileged } from "./unprivileged.ts";

export interface LocalPostgresOptions {
  /** `DATA_DIR`: the cluster, its passwords and its log live here, for this process alone. */
  dataDir: string;
  /** `SQL_PORT`: unset, `preferredPort` or a free port when that is taken; 0, a free port. */
  port?: number;
  /** The port taken when `port` is unset and it is free (config.ts: DEFAULT_SQL_PORT, Supabase's local one). */
  preferredPort: number;
  /** `SQL_PASSWORD`: the staff role's password; unset, the one generated at the first start. */
  staffPassword?: string;
  log: Logger;
}

export interface LocalPostgres {
  /** The API's own URL: the `postgres` superuser over loopback, with a password only this process reads. */
  url: string;
  port: number;
  /** The line staff paste to reach the same server with psql, as the `staff` role; it reads the password from its file. */
  psql: string;
  /** A fast shutdown (pg_ctl stop -m fast), then the directory is free for the next start. */
  close(): Promise<void>;
}

/**
 * Settings the server is started with, as pg_ctl's `-o` (read by sh). Loopback only, and no Unix
 * socket: nothing but the password opens it. A small shared_buffers: the demo fits many times over,
 * and the whole default stays within its memory budget. fsync stays on: nothing committed is lost
 * when the machine goes down.
 */
const SERVER_SETTINGS = [
  "-c listen_addresses=127.0.0.1",
  "-c unix_socket_directories=''",
  "-c shared_buffers=32MB",
  "-c max_connections=100",
  // Each line of DATA_DIR/postgres.log says when, and which role on which database.
  "-c 'log_line_prefix=%m [%p] %q%u@%d '",
].join(" ");

/** How long pg_ctl waits for the server to start or stop: a hang guard, never reached on a healthy machine. */
const PG_CTL_WAIT_S = "120";

/** Where first starts' initdb writes, each start's by its pid. */
const FIRST_START_PREFIX = "postgres.first-start-";

/** The files of DATA_DIR, by what they hold. */
function layoutOf(dataDir: string) {
  const root = resolve(dataDir);
  return {
    root,
    /** The cluster (PGDATA). */
    cluster: join(root, "postgres"),
    /**
     * Where this start's initdb writes, renamed to `cluster` once whole: its own, since an initdb
     * that a killed start left running goes on writing into that start's.
     */
    aside: join(root, `${FIRST_START_PREFIX}${process.pid}`),
    log: join(root, "postgres.log"),
    /** The `postgres` superuser's password: the API's, never printed. */
    apiPassword: join(root, "api-password"),
    /** The `staff` role's password: what staff's psql sends. */
    staffPassword: join(root, "sql-password"),
  };
}

/** Whether `entry` is a name a data directory of this layout holds. */
const isKnownEntry = (entry: string) =>
  ["postgres", "postgres.log", "api-password", "sql-password"].includes(entry) || entry.startsWith(FIRST_START_PREFIX);

/** Runs `program` with `args` as PostgreSQL wants (db/unprivileged.ts); rejects with its output. */
function run(program: string, args: string[]): Promise<string> {
  const [command, commandArgs] = unprivileged(program, args);
  // English messages, whatever the machine's locale: the failures below are quoted to the operator.
  const env = { ...process.env, LC_MESSAGES: "C", LC_ALL: "" };
  return new Promise((resolve, reject) => {
    execFile(command, commandArgs, { env, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const refused = error && namespaceRefused(`${stderr}\n${error.message}`);
      if (refused) reject(new ConfigError(refused));
      else if (error) reject(new Error(`${program.split("/").pop()} failed: ${(stderr || stdout || error.message).trim()}`));
      else resolve(stdout);
    });
  });
}

/** A file only its owner reads, holding `value` on its one line (as initdb's --pwfile reads it). */
function writeSecret(path: string, value: string) {
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  // The mode above applies to a new file only: one that was there keeps its own otherwise.
  chmodSync(path, 0o600);
}

/** The secret in `path`, made and kept there on first use: its line as written, spaces and all. */
function secretAt(path: string): string {
  if (existsSync(path)) return readFileSync(path, "utf8").replace(/\n$/, "");
  const made = randomBytes(24).toString("base64url");
  writeSecret(path, made);
  return made;
}

/** `text` as one word for sh: single-quoted, a quote inside closed, escaped and opened again (POSIX). */
function shellWord(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Whether nothing listens on `port` of 127.0.0.1 now. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

/** A port free on 127.0.0.1 now, as the kernel picks it. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/**
 * The port the server takes: SQL_PORT when set (in use: refused, naming SQL_PORT, as the operator
 * chose it), else `preferred`, else a free one, said in one line. Probed before the server binds
 * it: a port taken in between makes pg_ctl's start fail with the server's own line.
 */
async function choosePort(chosen: number | undefined, preferred: number, log: Logger): Promise<number> {
  if (chosen === 0) return freePort();
  if (chosen !== undefined) {
    if (!(await portIsFree(chosen))) throw new PortInUseError(chosen, "SQL_PORT");
    return chosen;
  }
  if (await portIsFree(preferred)) return preferred;
  const moved = await freePort();
  log("warn", "sql_port_moved", { port: moved, reason: `${preferred} is in use: the database listens on ${moved}; set SQL_PORT to choose the port` });
  return moved;
}

/**
 * The command line of process `pid`, or undefined when there is none: /proc on Linux, read by `cat`
 * since Deno asks --allow-all of a process that reads /proc itself; `ps` elsewhere.
 */
function commandLineOf(pid: number): Promise<string | undefined> {
  const [command, args] = process.platform === "linux" ? ["cat", [`/proc/${pid}/cmdline`]] : ["ps", ["-o", "args=", "-p", String(pid)]];
  return new Promise((resolve) => execFile(command, args, { encoding: "utf8" }, (error, stdout) => resolve(error ? undefined : stdout.replaceAll("\0", " "))));
}

/**
 * The server a killed `npm start` left running on this cluster, stopped (a fast shutdown: what it
 * committed is kept), so this start runs its own with today's settings. A lock file whose process is
 * gone is left to the server, which replaces it; one whose pid now names another program (a reboot
 * reused it) is removed, since the server would refuse to start beside it. Only called with the data
 * directory's lock held (db/data-dir-lock.ts): no other start of ours can be using the cluster.
 */
async function stopLeftover(cluster: string, pgCtl: string, log: Logger) {
  const lockFile = join(cluster, "postmaster.pid");
  if (!existsSync(lockFile)) return;
  const pid = Number(readFileSync(lockFile, "utf8").split("\n")[0]);
  if (!Number.isInteger(pid) || pid <= 0) return;
  const commandLine = await commandLineOf(pid);
  if (commandLine === undefined) return;
  if (!commandLine.includes(cluster)) {
    rmSync(lockFile, { force: true });
    return;
  }
  log("warn", "database_left_running", { pid, reason: "a previous start ended without stopping its database (kill -9?): stopping it first" });
  await run(pgCtl, ["stop", "-D", cluster, "-m", "fast", "-w", "-t", PG_CTL_WAIT_S]);
}

/**
 * The last lines of the server's log that say why it stopped or refused (FATAL, PANIC, an error),
 * for a start that failed.
 */
function whyInLog(logFile: string): string {
  try {
    const lines = readFileSync(logFile, "utf8").trim().split("\n");
    return lines.filter((line) => /FATAL|PANIC|ERROR/.test(line)).slice(-3).join("\n") || lines.slice(-3).join("\n");
  } catch {
    return "";
  }
}

/**
 * The staff role: its password and its limits (sql/staff-sessions.sql), set at every start, so a
 * changed SQL_PASSWORD takes effect. The password is quoted by node-postgres (escapeLiteral): ALTER
 * ROLE takes no parameters.
 */
async function configureStaff(url: string, password: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(readFileSync(new URL("../../../sql/staff-sessions.sql", import.meta.url), "utf8"));
    // A statement that fails is logged with its text: this one holds the password.
    await client.query("set log_min_error_statement = panic");
    await client.query(`alter role staff password ${client.escapeLiteral(password)}`);
  } finally {
    await client.end();
  }
}

/**
 * What earlier first starts stopped midway left, removed as far as it can be now: a directory an
 * initdb still writes into may refuse (ENOTEMPTY), and goes at a later start.
 */
function removeEarlierFirstStarts(root: string) {
  for (const entry of readdirSync(root).filter((name) => name.startsWith(FIRST_START_PREFIX))) {
    try {
      rmSync(join(root, entry), { recursive: true, force: true });
    } catch {
      // Still being written by the initdb of a start that was killed: left for the next start.
    }
  }
}

/**
 * A first start's cluster, whole or not at all: initdb writes beside the cluster's place, which it
 * takes by one rename once initdb has finished. A start stopped at any moment before leaves no
 * cluster, and the next start begins again; the schema and seed that follow are one transaction
 * (db/migrate.ts), so the same holds for them.
 */
async function initialise(layout: ReturnType<typeof layoutOf>, initdb: string, log: Logger) {
  log("info", "database_initialising", { dataDir: layout.root, reason: "first start: PostgreSQL 15's initdb" });
  removeEarlierFirstStarts(layout.root);
  await run(initdb, [
    "-D", layout.aside, "-U", "postgres", "--auth=scram-sha-256", `--pwfile=${layout.apiPassword}`,
    "--encoding=UTF8", "--locale=C.UTF-8",
  ]);
  renameSync(layout.aside, layout.cluster);
}

/**
 * PostgreSQL 15 in `DATA_DIR`, for this process alone, started with the binaries npm installed
 * (db/postgres-binaries.ts): the default database of `npm start`. The API reaches it as it reaches
 * `DATABASE_URL`, through its own pool (runtime.ts), as the `postgres` superuser with a password in
 * DATA_DIR/api-password. Staff reach the same server with psql as the `staff` role, whose sessions
 * are limited so that they never starve the API's (sql/staff-sessions.sql): its password is
 * SQL_PASSWORD, else one generated at the first start and kept in DATA_DIR/sql-password. Both
 * files are readable by their owner only. The server runs detached from this process (pg_ctl), so
 * Ctrl-C reaches the API first and the API stops the server after its drain; a server left by a
 * `kill -9` is stopped by the next start.
 *
 * @example
 * const local = await openLocalPostgres({ dataDir: ".data", log });
 * const db = openPostgres(local.url);
 */
export async function openLocalPostgres(options: LocalPostgresOptions): Promise<LocalPostgres> {
  const { log } = options;
  const layout = layoutOf(options.dataDir);
  if (existsSync(join(layout.root, "PG_VERSION"))) {
    throw new ConfigError(
      `DATA_DIR: ${options.dataDir} holds a PGlite database of an earlier Cadence, which this one no longer opens: move it aside (mv ${options.dataDir} ${options.dataDir}.pglite) to start on a new database with the demo data, or set DATA_DIR to another directory; nothing was changed`,
    );
  }
  const lock: DataDirLock = lockDataDir(options.dataDir);
  try {
    const binaries = await postgresBinaries();
    // A server a killed start left holds its port: stopped first, its port is free again.
    await stopLeftover(layout.cluster, binaries.pg_ctl, log);
    // Then the port: one in use is refused before any database work.
    const port = await choosePort(options.port, options.preferredPort, log);
    const strangers = existsSync(layout.root) ? readdirSync(layout.root).filter((entry) => !isKnownEntry(entry)) : [];
    if (strangers.length > 0 && !existsSync(join(layout.cluster, "PG_VERSION"))) {
      throw new ConfigError(`DATA_DIR: ${options.dataDir} holds files but no database (${strangers.slice(0, 3).join(", ")}): set DATA_DIR to a new or empty directory`);
    }
    mkdirSync(layout.root, { recursive: true, mode: 0o700 });
    const apiPassword = secretAt(layout.apiPassword);
    const staffPassword = options.staffPassword ?? secretAt(layout.staffPassword);
    if (options.staffPassword !== undefined) writeSecret(layout.staffPassword, options.staffPassword);
    if (!existsSync(join(layout.cluster, "PG_VERSION"))) await initialise(layout, binaries.initdb, log);
    // pg_ctl hands `-o` to the server through sh: the port is a number, the rest is ours.
    await run(binaries.pg_ctl, ["start", "-D", layout.cluster, "-l", layout.log, "-w", "-t", PG_CTL_WAIT_S, "-o", `-p ${port} ${SERVER_SETTINGS}`]).catch((error) => {
      throw new Error(`${errorMessage(error)}\n${whyInLog(layout.log)}`);
    });
    const url = `postgres://postgres:${encodeURIComponent(apiPassword)}@127.0.0.1:${port}/postgres`;
    const stop = () => run(binaries.pg_ctl, ["stop", "-D", layout.cluster, "-m", "fast", "-w", "-t", PG_CTL_WAIT_S]);
    await configureStaff(url, staffPassword).catch(async (error) => {
      await stop().catch(() => {});
      throw error;
    });
    return {
      url,
      port,
      psql: `PGPASSWORD="$(cat ${shellWord(layout.staffPassword)})" psql -h 127.0.0.1 -p ${port} -U staff postgres`,
      async close() {
        try {
          await stop();
        } finally {
          lock.release();
        }
      },
    };
  } catch (error) {
    lock.release();
    throw error;
  }
}
