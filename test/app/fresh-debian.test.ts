import { execFileSync, spawn } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect as connectTls } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv } from "../support/child-env.ts";
import { freePort, type PostgresServer, startPostgresServer } from "../support/postgres-server.ts";
import { type RedisServer, redisServerAvailable, startRedis } from "../support/redis.ts";
import { freePortRange } from "../support/server.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const DOC = `${ROOT}/functions/production/README.md`;
const DENO = `${ROOT}/node_modules/.bin/deno`;
const STEADY_KIOSKS = `${ROOT}/test/support/steady-kiosks.ts`;

/** The docs' block, in order, each line as written. */
const block = () => /```sh fresh-debian\n([\s\S]*?)```/.exec(readFileSync(DOC, "utf8"))![1];

/**
 * The lines this machine cannot run, each with why; every other line runs. A line of the block
 * that is neither here nor runnable fails the test, so a new step is never skipped unseen.
 */
const NOT_HERE: Array<[RegExp, string]> = [
  [/^apt-get update && apt-get install -y /, "no network: the test checks instead that each package is installed (.ci/run installs them)"],
  [/^curl -fsSL https:\/\/deb\.nodesource\.com\//, "no network: the test checks instead that Node.js is 20 or later"],
  [/^useradd /, "adds a system user: the services run as the test's user here"],
  [/^git clone /, "the checkout under test is the clone"],
  [/^\/opt\/cadence\/repo\/functions\/production\/release\.sh deploy$/, "the checkout under test is the release (test/app/deploy.test.ts runs release.sh)"],
];

/** What the test moves, as a chroot would: the machine's paths, the ports other runs may hold, its Postgres and Redis. */
interface Moves {
  etc: string;
  units: string;
  run: string;
  postgres: PostgresServer;
  redisUrl: string;
  proxyPort: number;
  port: number;
  adminPort: number;
}

/** The line as it runs here. Every change is one of these, each for the reason beside it. */
function moved(line: string, to: Moves): string {
  const postgres = `-h 127.0.0.1 -p ${to.postgres.port} -U postgres`;
  return line
    // The test's Postgres, reached as its superuser, in place of Debian's cluster as its OS user.
    .replace("runuser -u postgres -- psql ", `psql ${postgres} `)
    .replace("runuser -u postgres -- createdb ", `createdb ${postgres} `)
    .replace("127.0.0.1:5432", `127.0.0.1:${to.postgres.port}`)
    .replace("redis://127.0.0.1:6379", to.redisUrl)
    // Ports of its own: 443 needs root and 8000/9000 may be another run's; the workers and the proxy's servers follow PORT and ADMIN_PORT.
    .replace("CADENCE_PROXY_BIND=:443", `CADENCE_PROXY_BIND=127.0.0.1:${to.proxyPort}`)
    .replace("CLIENT_IP_HEADER=x-real-ip", `CLIENT_IP_HEADER=x-real-ip\nPORT=${to.port}\nADMIN_PORT=${to.adminPort}`)
    // The group `useradd` would have made.
    .replace(" -g cadence ", " ")
    // The host's name as its certificate names it too, with the proxy's port.
    .replaceAll("https://$(hostname -f)", `https://localhost:${to.proxyPort}`)
    .replaceAll("/etc/systemd/system", to.units)
    .replaceAll("/etc/cadence", to.etc)
    // The release under test is this checkout, with this run's node_modules.
    .replaceAll("/opt/cadence/current", ROOT);
}

/** The served certificate's SHA-256 fingerprint at the proxy. */
function servedFingerprint(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connectTls({ host: "127.0.0.1", port, servername: "localhost", ca }, () => {
      resolve(socket.getPeerX509Certificate()!.fingerprint256);
      socket.destroy();
    });
    socket.on("error", reject);
  });
}

describe.skipIf(!redisServerAvailable())("functions/production/README.md, from a fresh Debian VM to a 200 over TLS, run as written", () => {
  let dir: string;
  let to: Moves;
  let redis: RedisServer;
  let env: NodeJS.ProcessEnv;
  let printed = "";

  const systemctl = (...args: string[]) => execFileSync("systemctl", args, { env, stdio: "inherit" });

  beforeAll(async () => {
    // Not under /dev/shm (the tests' usual scratch space): Deno reads a file under /dev only with --allow-all.
    dir = mkdtempSync("/tmp/cadence-fresh-debian-");
    redis = await startRedis();
    to = {
      etc: join(dir, "etc-cadence"),
      units: join(dir, "systemd"),
      run: join(dir, "run"),
      postgres: await startPostgresServer(),
      redisUrl: redis.url,
      proxyPort: await freePort(),
      port: await freePortRange(2),
      adminPort: await freePortRange(2),
    };
    for (const path of [to.units, to.run]) mkdirSync(path);
    // `systemctl` played from the unit files (test/support/systemctl.ts).
    const bin = join(dir, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "systemctl"), `#!/bin/sh\nexec "${DENO}" run -A "${ROOT}/test/support/systemctl.ts" "$@"\n`);
    chmodSync(join(bin, "systemctl"), 0o755);
    env = childEnv({
      PATH: `${bin}:${ROOT}/node_modules/.bin:${process.env.PATH}`,
      SYSTEMCTL_UNITS: to.units,
      SYSTEMCTL_RUN: to.run,
      SYSTEMCTL_PATHS: JSON.stringify({
        "/opt/cadence/current": ROOT,
        "/etc/cadence": to.etc,
        "/run/cadence-proxy": to.run,
        "/run/cadence": join(to.run, "root"),
        "/var/cache/cadence": join(dir, "deno-cache"),
      }),
    });
  });
  afterAll(async () => {
    if (env) systemctl("stop", "cadence-proxy", "cadence-workers");
    await redis?.stop();
    await to?.postgres.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("names every package the block installs, and each is installed here; Node.js is 20 or later", () => {
    // The block's database server is the test's own cluster here (npm's PostgreSQL 15, as npm test
    // runs it): of Debian's, the test needs only the client its lines call (psql, createdb).
    const standIns: Record<string, string> = { "postgresql-15": "postgresql-client-15" };
    const packages = /^apt-get update && apt-get install -y (.+)$/m.exec(block())![1].split(/\s+/).map((name) => standIns[name] ?? name);
    const missing = packages.filter((name) => {
      try {
        return !execFileSync("dpkg-query", ["-W", "-f=${Status}", name], { encoding: "utf8" }).includes("install ok installed");
      } catch {
        return true;
      }
    });
    expect(missing).toEqual([]);
    expect(Number(/^v(\d+)/.exec(process.version)![1])).toBeGreaterThanOrEqual(20);
  });

  it("fails loudly when the service is dead: every curl of the block fails on an HTTP error and bounds its retries to a minute", () => {
    const curls = block().split("\n").filter((line) => /^curl /.test(line));
    expect(curls.length).toBeGreaterThan(1);
    for (const curl of curls) {
      expect(curl, curl).toMatch(/ -f[a-zA-Z]* /);
      if (curl.includes("--retry ")) expect(Number(/--retry-max-time (\d+)/.exec(curl)?.[1]), curl).toBeLessThanOrEqual(60);
    }
  });

  it("assumes nothing of a minimal Debian run as root: no sudo", () => {
    expect(block()).not.toMatch(/\bsudo\b/);
  });

  it("answers 200 over TLS at the end, and npm run check passes all 18 checks, every other line having run", async () => {
    const lines = block().split("\n");
    const skipped: string[] = [];
    const script = lines.map((line) => {
      const reason = NOT_HERE.find(([pattern]) => pattern.test(line))?.[1];
      if (!reason) return moved(line, to);
      skipped.push(line);
      return `: ${JSON.stringify(`not here: ${reason}`)}`;
    }).join("\n");
    expect(skipped).toHaveLength(NOT_HERE.length);
    const started = performance.now();
    const shell = spawn("sh", ["-e", "-c", script], { env, stdio: ["ignore", "pipe", "pipe"] });
    shell.stdout.on("data", (chunk: Buffer) => (printed += chunk));
    shell.stderr.on("data", (chunk: Buffer) => (printed += chunk));
    const code = await new Promise<number | null>((resolve) => shell.once("exit", resolve));
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`the fresh-Debian block ran in ${seconds} s, its curl answered then:\n${printed.split("\n").filter((line) => /passed|FAIL|\[\{"id":1/.test(line)).join("\n")}`);
    expect(code, printed).toBe(0);
    const frequencies = JSON.parse(/\[\{"id":1,[^\n]*\]/.exec(printed)![0]);
    expect(frequencies).toHaveLength(9);
    expect(printed).toContain("18 passed, 0 failed");
    // What the certificate command made: a leaf for the host, not a CA.
    const certificate = new X509Certificate(readFileSync(join(to.etc, "tls-certificate.pem")));
    expect(certificate.ca).toBe(false);
    expect(certificate.subjectAltName).toContain("DNS:localhost");
  });

  it("installs a renewed certificate with certbot's deploy hook and reloads the proxy with no kiosk call failing", async () => {
    const before = readFileSync(join(to.etc, "tls-certificate.pem"), "utf8");
    // A renewal as certbot leaves it: the live directory's fullchain.pem and privkey.pem.
    const lineage = join(dir, "live");
    execFileSync("sh", [`${ROOT}/functions/production/local-certificate.sh`, "localhost", lineage], { stdio: "ignore" });
    const renewed = readFileSync(join(lineage, "tls-certificate.pem"), "utf8");
    writeFileSync(join(lineage, "fullchain.pem"), renewed);
    writeFileSync(join(lineage, "privkey.pem"), execFileSync("openssl", ["pkey", "-in", join(lineage, "tls.pem")]));
    const ca = before + renewed;
    const kiosks = spawn(DENO, ["run", "--allow-net", STEADY_KIOSKS, JSON.stringify({ port: to.proxyPort, ca, kiosks: 40, everyMs: 1_000, key: "DEMO-0000-0000-0001", email: "demo@example.com" })], {
      env: childEnv(),
      stdio: ["pipe", "pipe", "inherit"],
    });
    let output = "";
    kiosks.stdout.on("data", (chunk: Buffer) => (output += chunk));
    const answered = () => Number([...output.matchAll(/"answered":(\d+)/g)].at(-1)?.[1] ?? 0);
    const until = async (condition: () => boolean | Promise<boolean>) => {
      while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 50));
    };
    await until(() => answered() >= 100);
    execFileSync(`${ROOT}/functions/production/certbot-deploy-hook.sh`, [], { env: { ...env, RENEWED_LINEAGE: lineage, CADENCE_TLS_CERT: join(to.etc, "tls.pem") }, stdio: "inherit" });
    const renewedPrint = new X509Certificate(renewed).fingerprint256;
    await until(async () => (await servedFingerprint(to.proxyPort, ca)) === renewedPrint);
    const atReload = answered();
    await until(() => answered() >= atReload + 100);
    kiosks.stdin!.end();
    await new Promise((resolve) => kiosks.once("exit", resolve));
    const tally: { statuses: Record<string, number>; failures: Record<string, number>; samples: Record<string, { body: string; retryAfter?: string }> } = JSON.parse(output.trim().split("\n").at(-1)!);
    console.log(`certbot's deploy hook and a seamless reload under 40 kiosks calling every second: ${JSON.stringify(tally)}`);
    expect(Object.keys(tally.statuses).filter((status) => !["200", "304", "429"].includes(status)), JSON.stringify(tally.samples)).toEqual([]);
    expect(tally.failures).toEqual({});
  });
});
