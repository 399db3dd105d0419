import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../functions/app/db/migrate.ts";
import { openPostgres } from "../../functions/app/db/postgres.ts";
import { childEnv } from "../support/child-env.ts";
import { type RunningProxy, startProxy } from "../support/haproxy.ts";
import { type PostgresServer, startPostgresServer } from "../support/postgres-server.ts";
import { type RedisServer, redisServerAvailable, startRedis } from "../support/redis.ts";
import { freePortRange } from "../support/server.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const DOC = `${ROOT}/functions/production/README.md`;
const DENO = `${ROOT}/node_modules/.bin/deno`;
const STEADY_KIOSKS = `${ROOT}/test/support/steady-kiosks.ts`;
/** What a kiosk may be answered during a deploy: fresh, unchanged, or told to wait its limit out. */
const ACCEPTABLE = ["200", "304", "429"];
const WORKERS = 2;

/** The docs' block tagged `sh <tag>`: its one command, as written. */
const documented = (tag: string) => new RegExp("```sh " + tag + "\\n([^\\n]+)\\n```").exec(readFileSync(DOC, "utf8"))![1];
/** The install block's lines that make the first release (the fresh-Debian test runs the rest). */
const installLines = () => /```sh fresh-debian\n([\s\S]*?)```/.exec(readFileSync(DOC, "utf8"))![1].split("\n").filter((line) => /^git clone |release\.sh deploy$/.test(line));

interface Tally {
  statuses: Record<string, number>;
  failures: Record<string, number>;
  samples: Record<string, { body: string; retryAfter?: string }>;
}

/** Polls `condition` every 50 ms; the test's own timeout bounds the wait. */
async function until(condition: () => boolean) {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** Kiosks calling through the proxy (test/support/steady-kiosks.ts) until `stop`, which tallies their answers. */
function kiosksCalling(proxy: RunningProxy) {
  const kiosks: ChildProcess = spawn(DENO, ["run", "--allow-net", STEADY_KIOSKS, JSON.stringify({ port: proxy.port, ca: proxy.certificate, kiosks: 60, everyMs: 1_000, key: "DEMO-0000-0000-0001", email: "demo@example.com" })], {
    env: childEnv(),
    stdio: ["pipe", "pipe", "inherit"],
  });
  let printed = "";
  kiosks.stdout!.on("data", (chunk: Buffer) => (printed += chunk));
  const exited = new Promise<void>((resolve) => kiosks.once("exit", () => resolve()));
  const answered = () => Number([...printed.matchAll(/"answered":(\d+)/g)].at(-1)?.[1] ?? 0);
  return {
    answered,
    async stop(): Promise<Tally> {
      // Calls on the workers that came after the command, too.
      const at = answered();
      await until(() => answered() >= at + 100);
      kiosks.stdin!.end();
      await exited;
      return JSON.parse(printed.trim().split("\n").at(-1)!);
    },
  };
}

describe.skipIf(!redisServerAvailable())("functions/production/README.md, deploying a new version, run as written under kiosks calling through HAProxy", () => {
  let dir: string;
  let home: string;
  let origin: string;
  let postgres: PostgresServer;
  let redis: RedisServer;
  let proxy: RunningProxy;
  let env: Record<string, string>;
  let port: number;
  let adminPort: number;
  const releases: Record<string, string> = {};

  const git = (...args: string[]) => execFileSync("git", ["-C", origin, "-c", "user.name=Cadence test", "-c", "user.email=test@example.com", ...args], { encoding: "utf8" }).trim();
  /** A command of the docs with the machine's paths moved to the test's, its output and status. */
  const run = (line: string) => {
    const result = spawnSync("sh", ["-e", "-c", line.replaceAll("/opt/cadence", home)], { env, encoding: "utf8" });
    return { status: result.status, output: result.stdout + result.stderr };
  };
  const current = () => readlinkSync(join(home, "current"));
  const supervisorLog = () => readFileSync(join(dir, "run", "cadence-workers.service.log"), "utf8");
  /** The release each worker runs in now: its process's working directory. */
  const workerReleases = () =>
    Array.from({ length: WORKERS }, (_, i) => {
      const pid = [...supervisorLog().matchAll(new RegExp(`"event":"listening",.*"pid":(\\d+),.*"worker":${i + 1}\\b`, "g"))].at(-1)![1];
      return realpathSync(`/proc/${pid}/cwd`);
    });

  beforeAll(async () => {
    // Not under /dev/shm (the tests' usual scratch space): Deno reads a file under /dev only with --allow-all.
    dir = mkdtempSync("/tmp/cadence-deploy-");
    home = join(dir, "opt-cadence");
    origin = join(dir, "origin");
    const etc = join(dir, "etc-cadence");
    for (const path of [home, origin, etc, join(dir, "run"), join(dir, "units"), join(dir, "bin")]) mkdirSync(path);
    // Upstream: this checkout's files as they are now (committed or not), one commit.
    const files = execFileSync("git", ["-C", ROOT, "ls-files", "--cached", "--others", "--exclude-standard"], { encoding: "utf8" }).split("\n").filter((file) => file && existsSync(join(ROOT, file)));
    execFileSync("tar", ["-c", "-C", ROOT, "-T", "-", "-f", join(dir, "tree.tar")], { input: files.join("\n") });
    execFileSync("tar", ["-x", "-C", origin, "-f", join(dir, "tree.tar")]);
    execFileSync("git", ["-C", origin, "init", "-q", "-b", "main"]);
    git("add", "-A");
    git("commit", "-q", "-m", "the release the machine runs");
    releases.first = git("rev-parse", "--short=12", "HEAD");

    postgres = await startPostgresServer();
    const setup = openPostgres(postgres.url, { max: 1 });
    try {
      await migrate(setup, { seed: true });
    } finally {
      await setup.close();
    }
    redis = await startRedis();
    [port, adminPort] = [await freePortRange(WORKERS), await freePortRange(WORKERS)];
    writeFileSync(join(etc, "cadence.env"), `DATABASE_URL=${postgres.url}\nREDIS_URL=${redis.url}\nCLIENT_IP_HEADER=x-real-ip\nDENO_JOBS=${WORKERS}\nPORT=${port}\nADMIN_PORT=${adminPort}\n`);
    for (const unit of ["cadence-workers.service", "cadence-proxy.service"]) copyFileSync(join(ROOT, "functions/production", unit), join(dir, "units", unit));
    // `systemctl` played from the unit files (test/support/systemctl.ts).
    writeFileSync(join(dir, "bin", "systemctl"), `#!/bin/sh\nexec "${DENO}" run -A "${ROOT}/test/support/systemctl.ts" "$@"\n`);
    chmodSync(join(dir, "bin", "systemctl"), 0o755);
    env = childEnv({
      PATH: `${join(dir, "bin")}:${process.env.PATH}`,
      CADENCE_HOME: home,
      // From npm's cache, which the install filled: the tests reach no registry.
      npm_config_offline: "true",
      SYSTEMCTL_UNITS: join(dir, "units"),
      SYSTEMCTL_RUN: join(dir, "run"),
      SYSTEMCTL_PATHS: JSON.stringify({ "/opt/cadence": home, "/etc/cadence": etc, "/var/cache/cadence": join(dir, "deno-cache") }),
    });
  });
  afterAll(async () => {
    if (env) spawnSync("systemctl", ["stop", "cadence-workers"], { env, stdio: "inherit" });
    await proxy?.stop();
    await redis?.stop();
    await postgres?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("installs the first release from the clone with the install block's lines, and the workers start from current", async () => {
    const lines = installLines();
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      const { status, output } = run(line.replace("https://example.com/cadence.git", origin).replace(/\s+#.*$/, ""));
      expect(status, output).toBe(0);
    }
    expect(current()).toMatch(new RegExp(`^releases/\\d{14}-${releases.first}$`));
    const { status, output } = run("systemctl enable --now cadence-workers");
    expect(status, output).toBe(0);
    await until(() => existsSync(join(dir, "run", "cadence-workers.service.log")) && supervisorLog().includes('"event":"workers_ready"'));
    proxy = await startProxy({ PORT: String(port), ADMIN_PORT: String(adminPort), DENO_JOBS: String(WORKERS) }, 4096);
    expect(workerReleases()).toEqual(Array(WORKERS).fill(realpathSync(join(home, current()))));
  });

  it("deploys a new commit that changes the lockfile: every call answered, every worker on the new release, built beside the old", async () => {
    // A dependency the services did not install before (a dev one made a runtime one), as `npm install --save-prod` writes it.
    const manifest = JSON.parse(readFileSync(join(origin, "package.json"), "utf8"));
    const version = manifest.devDependencies["fast-check"];
    delete manifest.devDependencies["fast-check"];
    manifest.dependencies["fast-check"] = version;
    writeFileSync(join(origin, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    const lock = JSON.parse(readFileSync(join(origin, "package-lock.json"), "utf8"));
    delete lock.packages[""].devDependencies["fast-check"];
    lock.packages[""].dependencies["fast-check"] = version;
    for (const name of ["fast-check", ...Object.keys(lock.packages["node_modules/fast-check"].dependencies ?? {})]) delete lock.packages[`node_modules/${name}`].dev;
    writeFileSync(join(origin, "package-lock.json"), `${JSON.stringify(lock, null, 2)}\n`);
    git("commit", "-q", "-am", "fast-check at run time");
    releases.second = git("rev-parse", "--short=12", "HEAD");
    const before = current();

    const kiosks = kiosksCalling(proxy);
    await until(() => kiosks.answered() >= 100);
    const deploy = run(documented("deploy"));
    const tally = await kiosks.stop();
    console.log(`deploy of a new lockfile under 60 kiosks calling every second: ${JSON.stringify(tally)}\n${deploy.output}`);
    expect(deploy.status, deploy.output).toBe(0);
    expect(Object.keys(tally.statuses).filter((status) => !ACCEPTABLE.includes(status)), JSON.stringify(tally.samples)).toEqual([]);
    expect(tally.failures).toEqual({});
    expect(current()).toMatch(new RegExp(`^releases/\\d{14}-${releases.second}$`));
    expect(readlinkSync(join(home, "previous"))).toBe(before);
    expect(workerReleases()).toEqual(Array(WORKERS).fill(realpathSync(join(home, current()))));
    expect(existsSync(join(home, current(), "node_modules/fast-check"))).toBe(true);
    expect(existsSync(join(home, before, "node_modules/fast-check"))).toBe(false);
  });

  it("deploys a release whose workers cannot start: every call answered, every worker back on the release it ran, the command failing and saying so", async () => {
    const entry = join(origin, "functions/api/index.ts");
    writeFileSync(entry, `throw new Error("a release that cannot start");\n${readFileSync(entry, "utf8")}`);
    git("commit", "-q", "-am", "a release that cannot start");
    const before = current();

    const kiosks = kiosksCalling(proxy);
    await until(() => kiosks.answered() >= 100);
    const deploy = run(documented("deploy"));
    const tally = await kiosks.stop();
    console.log(`deploy of a release that cannot start under 60 kiosks calling every second: ${JSON.stringify(tally)}\n${deploy.output}`);
    expect(deploy.status).toBe(1);
    expect(deploy.output).toMatch(/the workers did not move to .*: worker 1 exited with 1 before it was ready/);
    expect(deploy.output).toContain(`did not start; current is back on ${before}, whose workers serve`);
    expect(Object.keys(tally.statuses).filter((status) => !ACCEPTABLE.includes(status)), JSON.stringify(tally.samples)).toEqual([]);
    expect(tally.failures).toEqual({});
    expect(current()).toBe(before);
    expect(workerReleases()).toEqual(Array(WORKERS).fill(realpathSync(join(home, before))));
    expect(supervisorLog()).toContain('"event":"rolling_restart_stopped"');
  });

  it("rolls back to the previous release in one command: every call answered, every worker on it", async () => {
    const [before, previous] = [current(), readlinkSync(join(home, "previous"))];
    expect(previous).toMatch(new RegExp(`-${releases.first}$`));

    const kiosks = kiosksCalling(proxy);
    await until(() => kiosks.answered() >= 100);
    const rollback = run(documented("rollback"));
    const tally = await kiosks.stop();
    console.log(`rollback under 60 kiosks calling every second: ${JSON.stringify(tally)}\n${rollback.output}`);
    expect(rollback.status, rollback.output).toBe(0);
    expect(Object.keys(tally.statuses).filter((status) => !ACCEPTABLE.includes(status)), JSON.stringify(tally.samples)).toEqual([]);
    expect(tally.failures).toEqual({});
    expect([current(), readlinkSync(join(home, "previous"))]).toEqual([previous, before]);
    expect(workerReleases()).toEqual(Array(WORKERS).fill(realpathSync(join(home, previous))));
  });
});
