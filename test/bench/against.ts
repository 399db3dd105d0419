/// <reference lib="deno.ns" />
// `npm run bench -- --against <commit>[,<commit>...]`: the working tree beside other commits in one
// run. Each commit is checked out in a git worktree of its own (its node_modules linked when its
// package-lock.json is this tree's, else installed with npm ci), migrated into a database of its
// own, and served by its own entry; every server is measured on the Postgres of DATABASE_URL and on its
// own default database (what `npm start` with no DATABASE_URL runs: PGlite before issue 58, PostgreSQL 15
// in DATA_DIR since), interleaved (side-by-side.ts). Scenario names filter as in `npm run bench`; `--rounds N` repeats each palindrome.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, symlinkSync } from "node:fs";
import { type RunningServer, startServer } from "../support/server.ts";
import { benchDatabase, checkoutDatabase } from "./database.ts";
import type { BenchFlags } from "./flags.ts";
import { selectScenarios } from "./scenarios.ts";
import { measureSideBySide, type Side, sideBySideTable } from "./side-by-side.ts";

const here = new URL("../../", import.meta.url);
const git = (args: string[], cwd = here.pathname) => execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

/** A commit checked out beside this tree, ready to serve. */
async function checkout(commit: string, progress: (line: string) => void): Promise<{ label: string; root: URL; remove(): void }> {
  const label = git(["rev-parse", "--short", commit]);
  const directory = await Deno.makeTempDir({ prefix: `cadence-${label}-` });
  git(["worktree", "add", "--detach", directory, commit]);
  const root = new URL(`file://${directory}/`);
  const lock = (at: URL) => readFileSync(new URL("package-lock.json", at), "utf8");
  if (existsSync(new URL("package-lock.json", root)) && lock(root) === lock(here)) {
    symlinkSync(new URL("node_modules", here).pathname, new URL("node_modules", root).pathname);
  } else {
    progress(`${label}: its dependencies differ from this tree's: npm ci`);
    execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: directory, stdio: "ignore" });
  }
  return { label, root, remove: () => git(["worktree", "remove", "--force", directory]) };
}

/**
 * Runs the comparison and prints one table per database.
 *
 * @example
 * await compareAgainst(["327ebed"], { rounds: 2, scenarios: ["frequencies"] });
 */
export async function compareAgainst(commits: string[], flags: Pick<BenchFlags, "rounds" | "scenarios">): Promise<void> {
  const progress = (line: string) => console.error(`bench: ${line}`);
  const selected = selectScenarios(flags.scenarios);
  const rounds = flags.rounds ?? 1;

  const checkouts: Awaited<ReturnType<typeof checkout>>[] = [];
  const servers: RunningServer[] = [];
  const directories: string[] = [];
  progress("starting Postgres 15 and applying migrations and seed with the Supabase CLI");
  const database = await benchDatabase();
  try {
    for (const commit of commits) checkouts.push(await checkout(commit, progress));
    const trees = [{ label: "tree", root: here, url: database.url }];
    for (const { label, root } of checkouts) trees.push({ label, root, url: await checkoutDatabase(database, `bench_${label}`, root) });
    const sides: Side[] = [];
    for (const kind of ["DATABASE_URL", "default"] as const) {
      for (const tree of trees) {
        const dataDir = await Deno.makeTempDir({ prefix: "cadence-bench-default-" });
        directories.push(dataDir);
        // wrk sends every request from its own X-Forwarded-For: the limiter runs on each, never refusing one.
        const env: Record<string, string> = kind === "DATABASE_URL" ? { DATABASE_URL: tree.url, TRUST_PROXY: "true" } : { DATA_DIR: dataDir, TRUST_PROXY: "true" };
        const server = await startServer(env, "functions/api/index.ts", { root: tree.root });
        servers.push(server);
        progress(`${tree.label} on ${kind}: listening at ${server.url}`);
        // The default holds the demo seed only: the bench's 1,000 keys are inserted in its Postgres.
        sides.push({ label: `${tree.label}, ${kind}`, server, skips: kind === "default" ? (scenario) => scenario.fleet !== undefined : undefined });
      }
    }
    const rows = await measureSideBySide(sides, selected, progress, rounds);
    for (const kind of ["DATABASE_URL", "default"]) {
      console.log(`\n${kind}: requests/s, mean of ${2 * rounds} interleaved runs each (wrk -t2 -c50, 8 s)`);
      console.log(sideBySideTable(rows, trees.map((tree) => `${tree.label}, ${kind}`)));
    }
  } finally {
    for (const server of servers) await server.stop();
    await database.server.stop();
    for (const { remove } of checkouts) remove();
    for (const directory of directories) await Deno.remove(directory, { recursive: true });
  }
}
