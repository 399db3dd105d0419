/// <reference lib="deno.ns" />
// `npm run bench -- --first-start [--rounds N]`: what `npm start` on its own database costs a new
// user, as issue 58 counts it: from spawning the entry on an empty DATA_DIR to its first 200, from
// spawning it again on that directory to its first 200, and the resident memory of the whole default
// (the server and every PostgreSQL process of its directory) once the README's demo requests ran.
import { startV8Flags } from "../support/server.ts";

const root = new URL("../../", import.meta.url);
const deno = new URL("node_modules/.bin/deno", root).pathname;

/** The README's `sh demo` reads, as a new user tries them (README.md, Try it). */
const DEMO_REQUESTS: Array<[string, RequestInit?]> = [
  ["/api/v2/frequencies"],
  ["/api/v2/groups"],
  ["/api/v2/proclamations"],
  ["/api/v2/proclamations", { headers: { "x-license-key": "DEMO-0000-0000-0001", "x-email": "demo@example.com" } }],
  ["/api/v2/license", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ license_key: "DEMO-0000-0000-0001", email_address: "demo@example.com", systemName: "Lobby" }),
  }],
  ["/api/v2/licenses/DEMO-0000-0000-0001/schedule"],
  ["/api/v2/licenses/DEMO-0000-0000-0002/schedule"],
  ["/api/v2/schedule?email=legacy@example.com&key=DEMO-0000-0000-0005"],
  ["/api/v2/openapi.json"],
];

/** A number of kibibytes from a /proc status-like file's `name:` line, 0 when the process is gone. */
function kib(path: string, name: string): number {
  try {
    const line = Deno.readTextFileSync(path).split("\n").find((row) => row.startsWith(`${name}:`));
    return line ? Number(line.split(/\s+/)[1]) : 0;
  } catch {
    return 0;
  }
}

/** The pids of the PostgreSQL processes serving `cluster`: its postmaster (postmaster.pid) and the postmaster's children. */
function clusterPids(cluster: string): number[] {
  const postmaster = Number(Deno.readTextFileSync(`${cluster}/postmaster.pid`).split("\n")[0]);
  const children = new TextDecoder().decode(new Deno.Command("ps", { args: ["-o", "pid=", "--ppid", String(postmaster)] }).outputSync().stdout);
  return [postmaster, ...children.split("\n").map(Number).filter((pid) => pid > 0)];
}

interface Started {
  port: number;
  child: Deno.ChildProcess;
  ms: number;
}

/** Spawns the entry on `dataDir` as npm start does, and times its first 200 on a database read. */
async function startTimed(dataDir: string): Promise<Started> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  const started = performance.now();
  const child = new Deno.Command(deno, {
    args: ["run", "-A", ...startV8Flags, "functions/api/index.ts"],
    cwd: root.pathname,
    env: { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "/root", NO_COLOR: "1", PORT: String(port), SQL_PORT: "0", DATA_DIR: dataDir },
    clearEnv: true,
    stdout: "null",
    stderr: "null",
  }).spawn();
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/api/v2/frequencies`);
      await response.body?.cancel();
      if (response.status === 200) return { port, child, ms: performance.now() - started };
    } catch {
      // Not listening yet.
    }
    if (performance.now() - started > 120_000) throw new Error("no answer within 120 s");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function stop(child: Deno.ChildProcess) {
  child.kill("SIGTERM");
  await child.status;
}

export interface FirstStart {
  firstStartMs: number;
  restartMs: number;
  /** Proportional set size of the server and its PostgreSQL processes (shared pages counted once). */
  pssMib: number;
  /** Resident set sizes added up (shared buffers counted once per process that touched them). */
  rssMib: number;
}

/**
 * `rounds` fresh data directories, each: a first start, the demo requests, the memory, a stop, a
 * restart. Prints one line per round and returns them.
 */
export async function measureFirstStart(rounds = 3): Promise<FirstStart[]> {
  const results: FirstStart[] = [];
  for (let round = 0; round < rounds; round++) {
    const dataDir = await Deno.makeTempDir({ prefix: "cadence-first-start-" });
    try {
      const first = await startTimed(`${dataDir}/data`);
      for (const [path, init] of DEMO_REQUESTS) await (await fetch(`http://127.0.0.1:${first.port}${path}`, init)).body?.cancel();
      const pids = [first.child.pid, ...clusterPids(`${dataDir}/data/postgres`)];
      const pss = pids.reduce((sum, pid) => sum + kib(`/proc/${pid}/smaps_rollup`, "Pss"), 0);
      const rss = pids.reduce((sum, pid) => sum + kib(`/proc/${pid}/status`, "VmRSS"), 0);
      await stop(first.child);
      const again = await startTimed(`${dataDir}/data`);
      await stop(again.child);
      const result = { firstStartMs: first.ms, restartMs: again.ms, pssMib: pss / 1024, rssMib: rss / 1024 };
      console.log(
        `round ${round + 1}: first start ${(result.firstStartMs / 1000).toFixed(2)} s, restart ${(result.restartMs / 1000).toFixed(2)} s, ` +
          `memory after the demo requests ${result.pssMib.toFixed(0)} MiB PSS (${result.rssMib.toFixed(0)} MiB RSS added up, ${pids.length} processes)`,
      );
      results.push(result);
    } finally {
      await Deno.remove(dataDir, { recursive: true });
    }
  }
  return results;
}
