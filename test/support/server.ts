import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { STOP_WITHIN_MS } from "../../functions/app/admin/graceful-stop.ts";
import { childEnv } from "./child-env.ts";
import { assertRealClockOnly } from "./clock.ts";
import { leaksIn } from "./log-leaks.ts";

const here = new URL("../../", import.meta.url);
/** How long a start may take before it counts as hung: under vitest's test timeout, so the failure shows the server's output. */
const START_GUARD_MS = 240_000;
/**
 * How long a graceful stop may take before SIGKILL: the server's own bound and the supervisor's
 * kill past it, and a little more. A busy machine can stretch a drain past a few seconds, and a
 * test that kills a server mid-stop would read a log cut short.
 */
const STOP_GUARD_MS = STOP_WITHIN_MS + 10_000;

/** A start script of package.json in the checkout at `root`. */
const startScriptOf = (root: URL, script = "start"): string => JSON.parse(readFileSync(new URL("package.json", root), "utf8")).scripts[script];

/** The V8 flags `npm start` gives the server, so tests and the benchmark run it as users do. */
export const startV8Flags: string[] = startScriptOf(here).match(/--v8-flags=\S+/g) ?? [];

export interface StartOptions {
  /**
   * Runs the server under these limits on open files (`ulimit -Sn`, `ulimit -Hn`; hard defaults to
   * soft), as a host that allows no more would.
   */
  ulimit?: { soft: number; hard?: number };
  /**
   * Runs package.json's start script as npm does (`sh -c`, its permissions and shell lines
   * included) instead of the entry under `deno run -A`; `entry` is then the API's.
   */
  startScript?: boolean;
  /** The package.json script `startScript` runs: `start` by default, `start:workers` for the production start. */
  script?: "start" | "start:workers";
  /**
   * The checkout to run: its entry, its package.json's start flags, its node_modules (another
   * commit's, for the benchmark's `--against`); this one by default.
   */
  root?: URL;
}

/** One worker of `npm run start:workers`: its API, its admin listener and its process, as it started. */
export interface RunningWorker {
  url: string;
  adminUrl: string;
  pid: number;
}

export interface RunningServer {
  /** Base URL, e.g. http://127.0.0.1:43127; under `start:workers`, the first worker's. */
  url: string;
  /** The admin listener's base URL (`/live`, `/ready`, `/metrics`), when ADMIN_PORT opened one. */
  adminUrl?: string;
  /** Under `start:workers`: every worker, in order. */
  workers?: RunningWorker[];
  /** On the local default database: the loopback port where it listens, for the API and staff's psql (db/local-postgres.ts). */
  sqlPort?: number;
  /** Everything the server printed so far. */
  logs(): string;
  pid: number;
  /** Resolves with the server's exit code (null when a signal ended it) once its process has exited, however it stopped. */
  exited: Promise<number | null>;
  /**
   * Graceful stop (SIGTERM), SIGKILL past `STOP_GUARD_MS`. Both stops then grep everything the server printed
   * and throw if it holds a demo key, a demo e-mail or a secret it was given (support/log-leaks.ts):
   * every suite that runs the real entry checks its logs, errors included.
   */
  stop(): Promise<void>;
  /** SIGKILL at once, as a crash would. */
  kill(): Promise<void>;
}

/**
 * Starts an edge function's entry under Deno on a free port: the API (`functions/api/index.ts`) by
 * default, as `npm start` does, or another function's, as `supabase functions serve` would.
 *
 * @example
 * const server = await startServer({ DATABASE_URL: url });
 * await fetch(`${server.url}/api/v2/groups`);
 */
export async function startServer(
  env: Record<string, string> = {},
  entry = "functions/api/index.ts",
  options: StartOptions = {},
): Promise<RunningServer> {
  for (const url of [env.DATABASE_URL, env.SUPABASE_DB_URL]) if (url) assertRealClockOnly(url);
  const root = options.root ?? here;
  const deno = new URL("node_modules/.bin/deno", root).pathname;
  const startScript = startScriptOf(root, options.script);
  const args = ["run", "-A", ...(startScript.match(/--v8-flags=\S+/g) ?? []), entry];
  // The figure npm start reports, so the server caps its connections as it would under npm start.
  const limit = options.ulimit ? String(options.ulimit.soft) : execFileSync("sh", ["-c", "ulimit -Sn"], { encoding: "utf8" }).trim();
  // Under start:workers every worker takes free ports, and the supervisor's process group is
  // signalled whole, so no worker outlives a test.
  const workers = options.startScript === true && options.script === "start:workers";
  const spawnOptions = {
    cwd: root.pathname,
    env: childEnv({ PORT: "0", SQL_PORT: "0", ...(workers && { ADMIN_PORT: "0" }), FILE_DESCRIPTOR_LIMIT: limit, ...env }),
    stdio: ["ignore", "pipe", "pipe"] as ["ignore", "pipe", "pipe"],
    detached: workers,
  };
  let child;
  if (options.ulimit || options.startScript) {
    // The soft limit first: a hard limit under the current soft one is refused. Every step execs,
    // so the child's pid is the server's and signals reach it.
    const limits = options.ulimit ? `ulimit -Sn ${options.ulimit.soft} && ulimit -Hn ${options.ulimit.hard ?? options.ulimit.soft} && ` : "";
    const command = options.startScript ? startScript : `exec "$0" "$@"`;
    spawnOptions.env.PATH = `${new URL("node_modules/.bin", root).pathname}:${spawnOptions.env.PATH}`;
    child = spawn("sh", ["-c", limits + command, deno, ...args], spawnOptions);
  } else {
    child = spawn(deno, args, spawnOptions);
  }
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    // A hang guard: a first start (then on PGlite) beside two CPU-bound processes took over the 60 s this
    // once was, and the server it gave up on listened later and outlived the run; now it is killed.
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${entry} did not start within ${START_GUARD_MS / 1000} s:\n${output}`));
    }, START_GUARD_MS);
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = workers ? /"event":"workers_ready","workers":\d+,"ports":\[(\d+)/.exec(output) : /"event":"listening","port":(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited with ${code}:\n${output}`));
    });
  });
  const signalServer = (signal: NodeJS.Signals) => {
    try {
      if (workers) process.kill(-child.pid!, signal);
      else child.kill(signal);
    } catch {
      // The group is gone already.
    }
  };
  const stopWith = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      const timer = setTimeout(() => signalServer("SIGKILL"), STOP_GUARD_MS);
      await exited;
      clearTimeout(timer);
    }
    const leaks = leaksIn(output, env);
    if (leaks.length > 0) throw new Error(`${entry} printed ${leaks.join(", ")}:\n${output}`);
  };
  const sqlPort = /"psql":"[^\n]*? psql -h 127\.0\.0\.1 -p (\d+) -U staff postgres"/.exec(output)?.[1];
  const adminPort = /"event":"listening","port":\d+,"host":"[^"]*","adminPort":(\d+)/.exec(output)?.[1];
  const ready = /"event":"workers_ready","workers":\d+,"ports":\[([\d,]+)\],"adminPorts":\[([\d,]+)\]/.exec(output);
  const local = (port: string) => `http://127.0.0.1:${port}`;
  return {
    url: `http://127.0.0.1:${port}`,
    adminUrl: adminPort ? local(adminPort) : undefined,
    workers: ready
      ? ready[1].split(",").map((port, i) => ({
        url: local(port),
        adminUrl: local(ready[2].split(",")[i]),
        pid: Number(new RegExp(`"event":"listening","port":${port},.*"pid":(\\d+)`).exec(output)![1]),
      }))
      : undefined,
    sqlPort: sqlPort ? Number(sqlPort) : undefined,
    logs: () => output,
    pid: child.pid ?? 0,
    exited,
    stop: () => stopWith("SIGTERM"),
    kill: async () => {
      if (workers && child.exitCode === null && child.signalCode === null) signalServer("SIGKILL");
      await stopWith("SIGKILL");
    },
  };
}

/** Whether a loopback listener can take `port` now. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * The first of `count` consecutive ports free now, for `npm run start:workers` started where a
 * restart must find its workers again (PORT + i - 1 and ADMIN_PORT + i - 1); drawn at random from
 * 20000-32000, below Linux's default range of ephemeral ports (32768 up), so that no outgoing
 * connection takes one meanwhile.
 */
export async function freePortRange(count: number): Promise<number> {
  for (;;) {
    const first = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await Promise.all(Array.from({ length: count }, (_, i) => portFree(first + i)));
    if (free.every(Boolean)) return first;
  }
}

/** A process as `ps` lists it: its id and its command line. */
export interface ListedProcess {
  pid: number;
  args: string;
}

/**
 * The processes whose command line names `path`: for `<DATA_DIR>/postgres`, the postmaster of the
 * local default database a server started there (db/local-postgres.ts), which runs detached from
 * the server and so outlives a server killed with SIGKILL.
 *
 * @example
 * expect(processesNaming(join(dataDir, "postgres"))).toEqual([]);
 */
export function processesNaming(path: string): ListedProcess[] {
  return execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" })
    .split("\n")
    .map((line) => /^\s*(\d+) (.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null && match[2].includes(path))
    .map((match) => ({ pid: Number(match[1]), args: match[2] }));
}

/**
 * Ends what a test's servers left running under `path`, a directory of its own (a postmaster whose
 * server was killed, an initdb): SIGQUIT, PostgreSQL's immediate shutdown, to each by its pid. For
 * afterAll, after a test that failed before its servers' own stops.
 */
export function endProcessesNaming(path: string): void {
  for (const { pid } of processesNaming(path)) {
    try {
      process.kill(pid, "SIGQUIT");
    } catch {
      // Gone since it was listed.
    }
  }
}
