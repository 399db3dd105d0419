import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { childEnv } from "../support/child-env.ts";

const rootUrl = new URL("../../", import.meta.url);
const root = rootUrl.pathname;

/** Every npm script that takes arguments, and the words its usage begins with. */
const SCRIPTS: Record<string, string> = {
  bench: "usage: npm run bench",
  certificate: "usage: npm run -s certificate",
  check: "usage: npm run check",
  "events:proof": "usage: npm run events:proof",
  "outbox:deliver": "usage: npm run outbox:deliver",
  sign: "usage: npm run -s sign",
  simulate: "npm run simulate --",
  start: "usage: npm start",
  "start:workers": "usage: npm run start:workers",
};

/** What a script could write: the bench's results, the simulation's summaries. */
function written(): string {
  const listing = (dir: string) => (existsSync(new URL(dir, rootUrl)) ? readdirSync(new URL(dir, rootUrl)).join(",") : "none");
  return JSON.stringify({
    benchResults: listing("test/bench/results/"),
    summaries: listing("test/simulate/summaries/"),
  });
}

describe("npm run <script> -- --help", () => {
  for (const [script, usage] of Object.entries(SCRIPTS)) {
    it(`${script}: prints its usage, exits 0, starts and writes nothing`, async () => {
      const before = written();
      // Neither a database nor a secret in the environment: help needs none.
      // execFile rejects on any exit code but 0.
      const { stdout, stderr } = await promisify(execFile)("npm", ["run", "-s", script, "--", "--help"], { cwd: root, env: childEnv() });
      expect(stdout.startsWith(usage), stdout).toBe(true);
      // More than a bare line: what the script does, or its options.
      expect(stdout.trim().split("\n").length, stdout).toBeGreaterThan(2);
      expect(stderr).toBe("");
      expect(written()).toBe(before);
    });
  }
});

describe("npm start and npm run start:workers with an argument they do not take", () => {
  for (const script of ["start", "start:workers"]) {
    it(`${script}: refuses it with its usage, exits 2, starts nothing`, async () => {
      const before = written();
      const failed = await promisify(execFile)("npm", ["run", "-s", script, "--", "--port", "3000"], { cwd: root, env: childEnv() }).then(
        () => undefined,
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      expect(failed?.code).toBe(2);
      expect(failed?.stderr).toContain(SCRIPTS[script]);
      expect(failed?.stdout).not.toContain('"event":"listening"');
      expect(written()).toBe(before);
    });
  }
});
