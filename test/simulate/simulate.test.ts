import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv } from "../support/child-env.ts";
import { pgbouncerAvailable } from "../support/pgbouncer.ts";
import { redisServerAvailable } from "../support/redis.ts";
import { Summary } from "./summary.ts";

const root = new URL("../../", import.meta.url).pathname;
const deno = join(root, "node_modules/.bin/deno");

/** The simulation needs both servers of the production configuration; CI installs them (.ci/run). */
function serversAvailable(): boolean {
  if (!redisServerAvailable()) return false;
  if (pgbouncerAvailable()) return true;
  if (process.env.CI === "true") throw new Error("pgbouncer not found: CI must run the fleet simulation");
  console.warn("SKIPPING the fleet simulation: pgbouncer not found (apt-get install pgbouncer)");
  return false;
}

/**
 * A smoke run of `npm run simulate` (the long runs are that command's own): 150 kiosks, one per
 * address, polling every 5 s for half a minute (so the limit of 10 a minute per address is never
 * reached and changes made early can be judged), with the database restarted, paused and Redis
 * restarted meanwhile.
 */
const ARGS = ["--kiosks", "150", "--minutes", "0.5", "--poll-seconds", "5", "--per-address", "1", "--change-share", "0.1", "--faults"];

describe.skipIf(!serversAvailable())("npm run simulate, a smoke run with faults", () => {
  const dir = mkdtempSync(join(tmpdir(), "cadence-simulate-"));
  let exitCode: number;
  let summary: Summary;
  // Ends the run should the hook give up on it first: the simulator then stops what it started.
  const abort = new AbortController();
  let run: Promise<unknown> | undefined;

  beforeAll(async () => {
    const file = join(dir, "summary.json");
    run = promisify(execFile)(deno, ["run", "-A", "test/simulate/run.ts", ...ARGS, "--json", file], {
      cwd: root,
      env: childEnv(),
      maxBuffer: 16 << 20,
      signal: abort.signal,
    });
    try {
      await run;
      exitCode = 0;
    } catch (error) {
      const failed = error as { code?: number; stderr?: string };
      if (typeof failed.code !== "number") throw error;
      // The run finished and found something unexpected: its log says what.
      console.error(failed.stderr);
      exitCode = failed.code;
    }
    summary = Summary.parse(JSON.parse(readFileSync(file, "utf8")));
  });
  afterAll(async () => {
    abort.abort();
    await run?.catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });

  it("reports nothing unexpected, and exits 0", () => {
    expect(summary.unexpected).toBe(0);
    expect(exitCode).toBe(0);
  });

  it("sees every schedule change reach every kiosk it concerns within two poll intervals", () => {
    expect(summary.changes.made).toBeGreaterThan(0);
    expect(summary.changes.seenInTime).toBe(summary.changes.made);
  });

  it("counts every request under one status", () => {
    const counted = Object.values(summary.byStatus).reduce((sum, n) => sum + n, 0);
    expect(counted).toBe(summary.requests);
    expect(summary.requests).toBeGreaterThan(0);
  });

  it("counts every request once per minute it was sent in and once per route, status by status", () => {
    const total = (counts: Array<Record<string, number>>) =>
      counts.reduce<Record<string, number>>((sum, byStatus) => {
        for (const [status, n] of Object.entries(byStatus)) sum[status] = (sum[status] ?? 0) + n;
        return sum;
      }, {});
    expect(summary.byMinute!.map((minute) => minute.minute)).toEqual([0]);
    expect(total(summary.byMinute!.map((minute) => minute.byStatus))).toEqual(summary.byStatus);
    expect(Object.keys(summary.byRoute!).sort()).toEqual(["legacy", "license", "schedule", "system-name"]);
    expect(total(Object.values(summary.byRoute!))).toEqual(summary.byStatus);
  });

  it("gives each minute's CPU seconds of the server, the simulator, the database and the machine, within what its cores held", () => {
    expect(summary.cores).toBe(cpus().length);
    for (const { cpuSeconds, seconds } of summary.byMinute!) {
      for (const [part, used] of Object.entries(cpuSeconds)) expect(used, part).toBeGreaterThan(0);
      // /proc/stat counts in ticks of 10 ms: 1 % covers them.
      expect(cpuSeconds.machine).toBeLessThanOrEqual(summary.cores! * seconds! * 1.01);
    }
  });

  it("measures what a kiosk-day costs the server, the database and Redis", () => {
    for (const [name, value] of Object.entries(summary.perKioskDay)) expect(value, name).toBeGreaterThan(0);
  });
});
