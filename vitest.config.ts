import { configDefaults, defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { scratchSpace } from "./test/support/scratch-space.ts";

// Set before the global setup starts its cluster, and inherited by every test process (os.tmpdir()).
const scratch = scratchSpace();
if (scratch && !process.env.TMPDIR) process.env.TMPDIR = scratch;

/** The suites that matter on Supabase's transaction pooler: schedules, license, onboarding and the lifecycle calls, the batches, kiosk sightings, hostile values, ill-formed text. */
const throughPooler = [
  "test/schedule/license-schedule.test.ts",
  "test/schedule/legacy-schedule.test.ts",
  "test/schedule/schedule-payload.test.ts",
  "test/schedule/served-schedules.test.ts",
  "test/schedule/schedule-version.test.ts",
  "test/license/license.test.ts",
  "test/license/system-name.test.ts",
  "test/catalogue/proclamations.test.ts",
  "test/onboarding/onboarding.test.ts",
  "test/onboarding/signature.test.ts",
  "test/onboarding/onboarding-retries.test.ts",
  "test/automations/lifecycle.test.ts",
  "test/hardening/races.test.ts",
  "test/kiosk/kiosk-status.test.ts",
  "test/database/hostile-values.test.ts",
  "test/license/well-formed-text.test.ts",
];

/**
 * The files that need no database, Redis or server: the `unit` project. Run alone (`npm run
 * test:unit`, or `npx vitest run --project unit <file>`), it starts none of the global setup's
 * services (test/support/global-setup.ts), so one such file answers in a couple of seconds.
 */
const withoutServices = [
  "test/app/admission.test.ts",
  "test/app/bounded-map.test.ts",
  "test/app/config.test.ts",
  "test/app/ip-address.test.ts",
  "test/app/proxy-servers.test.ts",
  "test/app/rate-limit-client.test.ts",
  "test/app/log.test.ts",
  "test/database/backend-turns.test.ts",
  "test/database/sql-rule-index.test.ts",
  "test/license/system-name-look-alikes.test.ts",
  "test/rate-limit/window-counts.test.ts",
  "test/read-path/batch-while-busy.test.ts",
  "test/read-path/last-known-good.test.ts",
  "test/app/readiness.test.ts",
  "test/app/service-units.test.ts",
  "test/simulate/simulate-cost.test.ts",
];

/**
 * Files whose tests run one after another longest, longest first (a full run on 2 cores after
 * issue 58: proxy-floods 124 s, interrupted-first-start 84 s, deploy 83 s, entry 41 s).
 */
const longest = ["test/hardening/proxy-floods.test.ts", "test/app/interrupted-first-start.test.ts", "test/app/deploy.test.ts", "test/app/entry.test.ts"];

/**
 * Vitest's order, with `longest` first in its project. Without a previous run's durations (a fresh
 * clone) vitest starts larger files first, and interrupted-first-start, a small file, once ran last
 * and alone for 16 of a run's 26 minutes; started first, it overlaps the rest.
 */
class LongestFirst extends BaseSequencer {
  async sort(files: TestSpecification[]) {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const at = longest.findIndex((name) => file.moduleId.endsWith(name));
      return at < 0 ? longest.length : at;
    };
    const project = (file: TestSpecification) => sorted.findIndex((other) => other.project.name === file.project.name);
    return sorted.map((file, at) => ({ file, at })).sort((a, b) => project(a.file) - project(b.file) || rank(a.file) - rank(b.file) || a.at - b.at).map(({ file }) => file);
  }
}

/** What each project runs with. */
const everyProject = {
  // Hang guards, not budgets: each test waits for its own events and deadlines. Beside two
  // CPU-bound processes single tests took up to 63 s and hooks (a fleet's start and run) 80 s,
  // where 60 s and 120 s failed them; these stop only what no longer moves.
  testTimeout: 300_000,
  hookTimeout: 600_000,
  pool: "forks" as const,
  // A worker runs file after file of its project in one module graph, so the app's modules load
  // once per worker instead of once per file (~0.4 s of CPU each, 43 files). No file keeps state
  // in a module: each has its own databases, servers and clock. Measured on 2 cores: machine CPU
  // for the run 230-268 s isolated, 205-213 s shared.
  isolate: false,
  // supabase-js builds its realtime client on the global WebSocket, which Node 20 has only behind
  // this flag (Deno, where the app runs, has it).
  execArgv: ["--experimental-websocket"],
};

export default defineConfig({
  test: {
    // Run once, by the root project; vitest gives each project what the root provides. Projects
    // that extended the root config ran it again each (three clusters and their migrations a
    // run), so they take `everyProject` instead.
    globalSetup: ["test/support/global-setup.ts"],
    // Four at once on 2 cores: the longest suites mostly wait (a fleet's run, header and database
    // deadlines, restarts), so more of them overlap; measured 294 s with the default of 2, 142 s with 4.
    maxWorkers: 4,
    sequence: { sequencer: LongestFirst },
    projects: [
      { test: { ...everyProject, name: "unit", include: withoutServices } },
      { test: { ...everyProject, name: "direct", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, ...withoutServices] } },
      // The same suites again, the app (and every server they start) reaching Postgres through
      // PgBouncer in transaction mode, as on Supabase (test/support/database.ts).
      { test: { ...everyProject, name: "pooler", include: throughPooler, env: { CADENCE_TEST_THROUGH_POOLER: "1" } } },
    ],
  },
});
