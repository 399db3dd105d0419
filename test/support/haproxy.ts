import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { childEnv } from "./child-env.ts";
import { freePort } from "./postgres-server.ts";

/** The command the docs give for a local certificate. */
const LOCAL_CERTIFICATE = new URL("../../functions/production/local-certificate.sh", import.meta.url).pathname;
/** The shipped configuration, as operators run it. */
const CONFIG = new URL("../../functions/production/haproxy.cfg", import.meta.url).pathname;
/** What writes its servers, as cadence-proxy.service runs it. */
const SERVERS = new URL("../../functions/production/proxy-servers.sh", import.meta.url).pathname;

/**
 * What the tests add to it: a line per connection on stderr, with the TLS handshake's time (`Th`,
 * ms) and the termination state (`%tsc`: `----` a normal end, `cD`/`sQ`... why HAProxy ended it),
 * and a line for each connection that failed its handshake ("Timeout during SSL handshake").
 */
const LOGGING = {
  global: "    log stderr format raw local0\n",
  defaults: "    log global\n    log-format \"%ci:%cp [%tr] Th=%Th %TR/%Tw/%Tc/%Tr/%Ta %ST %tsc %ac/%fc/%bc/%sc/%rc %sq/%bq %{+Q}r\"\n",
};

export interface RunningProxy {
  /** e.g. https://127.0.0.1:41237 */
  url: string;
  port: number;
  pid: number;
  /** The self-signed certificate it serves (PEM), for clients to trust. */
  certificate: string;
  /** Everything HAProxy printed so far, its log included ([LOGGING]). */
  logs(): string;
  /**
   * The connections the proxy counts open under `key` (`conn_cur` of a stick table, read on its
   * stats socket): a client's (an IPv4 address, an IPv6 /64 as `x:x:x:x::`) in the frontend's
   * table `cadence`, a site's (an IPv6 /48 as `x:x:x::`) in `per-site`. What the caps judge, once
   * HAProxy has accepted and tracked the connections.
   */
  openCount(key: string, table?: "cadence" | "per-site"): Promise<number>;
  stop(): Promise<void>;
}

/** What `npm run start:workers` was given, which places its workers: worker i on PORT + i - 1, checked on ADMIN_PORT + i - 1. */
export interface WorkerSettings {
  PORT: string;
  ADMIN_PORT: string;
  DENO_JOBS: string;
}

/**
 * Debian's haproxy running functions/production/haproxy.cfg in front of the workers `npm run
 * start:workers` runs with `workers` (each checked on its admin listener), with a certificate for
 * `localhost` made by the docs' command (a leaf, not a CA), under `ulimit -n` of `descriptors`. Its
 * servers are written as the unit writes them (proxy-servers.sh), from an environment file holding
 * the workers' PORT and ADMIN_PORT, as an operator's /etc/cadence/cadence.env does. It listens on
 * `port` of both loopbacks, 127.0.0.1 and ::1, so IPv6 clients reach it too.
 *
 * @example
 * const settings = { PORT: String(await freePortRange(2)), ADMIN_PORT: String(await freePortRange(2)), DENO_JOBS: "2" };
 * const proxy = await startProxy(settings, 1024);
 */
export async function startProxy(workers: WorkerSettings, descriptors: number): Promise<RunningProxy> {
  const dir = mkdtempSync(join(tmpdir(), "cadence-haproxy-"));
  // The certificate operators make (functions/production/local-certificate.sh): a leaf for localhost.
  execFileSync("sh", [LOCAL_CERTIFICATE, "localhost", dir], { stdio: "ignore" });
  const certificate = readFileSync(join(dir, "tls-certificate.pem"), "utf8");
  const bundle = join(dir, "tls.pem");
  const port = await freePort();
  const shipped = readFileSync(CONFIG, "utf8");
  if (!/^global\n/m.test(shipped) || !/^defaults cadence\n/m.test(shipped)) throw new Error(`${CONFIG}: no global or defaults section to add logging to`);
  const config = join(dir, "haproxy.cfg");
  // A stats socket in the test's own directory (0700), for `openCount`.
  const stats = join(dir, "stats.sock");
  writeFileSync(config, shipped.replace(/^global\n/m, `global\n${LOGGING.global}    stats socket ${stats} mode 600\n`).replace(/^defaults cadence\n/m, `defaults cadence\n${LOGGING.defaults}`));
  const settings = join(dir, "workers.env");
  writeFileSync(settings, `PORT=${workers.PORT}\nADMIN_PORT=${workers.ADMIN_PORT}\n`);
  const servers = join(dir, "servers.cfg");
  execFileSync("sh", [SERVERS, servers, settings], { env: childEnv({ CADENCE_WORKERS: workers.DENO_JOBS }), stdio: ["ignore", "ignore", "inherit"] });
  // To a file, not a pipe: HAProxy drops log lines a pipe's reader is too busy to take.
  const log = join(dir, "haproxy.log");
  const child = spawn("sh", ["-c", `ulimit -Sn ${descriptors} && ulimit -Hn ${descriptors} && exec haproxy -db -f "$0" -f "$1" 2>"$2"`, config, servers, log], {
    env: childEnv({ CADENCE_PROXY_BIND: `127.0.0.1:${port},::1:${port}`, CADENCE_TLS_CERT: bundle }),
    stdio: ["ignore", "pipe", "ignore"],
  });
  let printed = "";
  child.stdout.on("data", (chunk: Buffer) => (printed += chunk));
  const output = () => printed + (existsSync(log) ? readFileSync(log, "utf8") : "");
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // Listening once a TCP connection is accepted; bounded by the suite's timeout.
  for (;;) {
    if (child.exitCode === 127) throw new Error("haproxy not found: apt-get install haproxy (.ci/run installs it)");
    if (child.exitCode !== null) throw new Error(`haproxy exited with ${child.exitCode}:\n${output()}`);
    const accepted = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (accepted) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    pid: child.pid ?? 0,
    certificate,
    logs: output,
    openCount: (key, table = "cadence") => new Promise<number>((resolve, reject) => {
      let shown = "";
      const socket = connect(stats, () => socket.end(`show table ${table}\n`));
      socket.on("data", (chunk: Buffer) => (shown += chunk));
      socket.on("error", reject);
      socket.on("close", () => {
        // As HAProxy prints an IPv6 key (inet_ntop: compressed, no leading zeros); IPv4 is mapped.
        const printed = key.includes(":") ? new URL(`http://[${key}]/`).hostname.slice(1, -1) : `::ffff:${key}`;
        const entry = shown.split("\n").find((line) => line.includes(` key=${printed} `));
        resolve(Number(/conn_cur=(\d+)/.exec(entry ?? "")?.[1] ?? 0));
      });
    }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
