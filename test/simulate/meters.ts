import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { cpuSeconds, postgresPids, reapedChildrenCpuSeconds } from "../bench/cpu.ts";
import { billedRedisCommands, redisNetBytes } from "../bench/redis-commands.ts";

const run = promisify(execFile);

/** Cumulative counts at one moment. */
export interface Reading {
  /** Statements the API sent through the pooler. */
  statements: number;
  redisCommands: number;
  /** Bytes Redis read and wrote (INFO stats). */
  redisBytes: number;
  serverCpuSeconds: number;
  databaseCpuSeconds: number;
}

/** Rows of a PgBouncer console command (`SHOW STATS`, `SHOW POOLS`), as objects by column name. */
async function pgbouncerShow(port: number, command: string): Promise<Array<Record<string, string>>> {
  const { stdout } = await run("psql", ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-A", "-F", "|", "-P", "footer=off", "-c", command, "pgbouncer"]);
  const [header, ...rows] = stdout.trim().split("\n").map((line) => line.split("|"));
  return rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i]])));
}

/** The Postgres cluster's CPU: the postmaster, its children now, and the children it has reaped. */
function clusterCpu(port: number): number {
  const [postmaster, ...children] = postgresPids(port);
  if (postmaster === undefined) return 0;
  return cpuSeconds(postmaster) + reapedChildrenCpuSeconds(postmaster) + children.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
}

/**
 * The counters the summary's per-kiosk-day figures come from, each a real count kept by the
 * server that does the work:
 * - statements: PgBouncer's `SHOW STATS` total_query_count for the database, i.e. every statement
 *   the API sent through the pooler. Chosen over pg_stat_statements (needs
 *   shared_preload_libraries) and pg_stat_database's xact_commit (counts the simulation's own
 *   staff edits and readings too, reaches the view only when a backend flushes its statistics,
 *   up to seconds later, and is reset by a crash): the pooler counts at once and outlives a
 *   database restart.
 * - redisCommands: INFO commandstats, every command (a script's own commands included), as
 *   Upstash bills them.
 * - redisBytes: INFO stats total_net_input_bytes + total_net_output_bytes.
 * - CPU: /proc/<pid>/stat utime + stime of the server processes, and of the Postgres processes.
 * A database or Redis restart starts their counters again from zero, and a server process that
 * ends (--worker-life) takes its CPU with it: `bankDatabase()`, `bankRedis()` and
 * `bankServer(pid)`, called just before one, keep what was counted so far.
 */
export function meters(options: { poolerPort: number; database: string; postgresPort: number; redisPort: number; serverPids: () => number[] }) {
  let bankedDatabaseCpu = 0;
  let bankedRedis = 0;
  let bankedRedisBytes = 0;
  let bankedServerCpu = 0;
  return {
    async read(): Promise<Reading> {
      const stats = await pgbouncerShow(options.poolerPort, "SHOW STATS");
      const row = stats.find((r) => r.database === options.database);
      return {
        statements: Number(row?.total_query_count ?? 0),
        redisCommands: bankedRedis + (await billedRedisCommands(options.redisPort)),
        redisBytes: bankedRedisBytes + (await redisNetBytes(options.redisPort)),
        serverCpuSeconds: bankedServerCpu + options.serverPids().reduce((sum, pid) => sum + cpuSeconds(pid), 0),
        databaseCpuSeconds: bankedDatabaseCpu + clusterCpu(options.postgresPort),
      };
    },
    bankDatabase() {
      bankedDatabaseCpu += clusterCpu(options.postgresPort);
    },
    async bankRedis() {
      bankedRedis += await billedRedisCommands(options.redisPort);
      bankedRedisBytes += await redisNetBytes(options.redisPort);
    },
    /** Keeps the CPU of server process `pid`, about to end (it must still be among `serverPids()`'s until it does). */
    bankServer(pid: number) {
      bankedServerCpu += cpuSeconds(pid);
    },
    /** Connections now: the server's to the pooler (active or waiting), and the pooler's to Postgres. */
    async connections(): Promise<{ toPooler: number; toDatabase: number }> {
      const pools = (await pgbouncerShow(options.poolerPort, "SHOW POOLS")).filter((r) => r.database === options.database);
      const sum = (names: string[]) => pools.reduce((total, r) => total + names.reduce((n, name) => n + Number(r[name] ?? 0), 0), 0);
      return {
        toPooler: sum(["cl_active", "cl_waiting"]),
        toDatabase: sum(["sv_active", "sv_idle", "sv_used", "sv_tested", "sv_login"]),
      };
    },
  };
}
export type Meters = ReturnType<typeof meters>;
