import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { childEnv } from "./child-env.ts";
import { freePort } from "./postgres-server.ts";

/** The shipped configuration, as operators run it. */
const CONFIG = new URL("../../functions/production/haproxy.cfg", import.meta.url).pathname;

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
  stop(): Promise<void>;
}

/**
 * Debian's haproxy running functions/production/haproxy.cfg in front of `upstream`, with a
 * self-signed certificate for `localhost` made here (openssl), under `ulimit -n` of `descriptors`.
 * It listens on `port` of both loopbacks, 127.0.0.1 and ::1, so IPv6 clients reach it too.
 *
 * @example
 * const proxy = await startProxy("127.0.0.1:8000", 1024);
 */
export async function startProxy(upstream: string, descriptors: number): Promise<RunningProxy> {
  const dir = mkdtempSync(join(tmpdir(), "cadence-haproxy-"));
  const key = join(dir, "key.pem");
  const cert = join(dir, "cert.pem");
  // An ECDSA key: a flood of handshakes costs the proxy less than with RSA.
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert,
    "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
  ], { stdio: "ignore" });
  const certificate = readFileSync(cert, "utf8");
  const bundle = join(dir, "bundle.pem");
  writeFileSync(bundle, certificate + readFileSync(key, "utf8"));
  const port = await freePort();
  const shipped = readFileSync(CONFIG, "utf8");
  if (!/^global\n/m.test(shipped) || !/^defaults\n/m.test(shipped)) throw new Error(`${CONFIG}: no global or defaults section to add logging to`);
  const config = join(dir, "haproxy.cfg");
  writeFileSync(config, shipped.replace(/^global\n/m, `global\n${LOGGING.global}`).replace(/^defaults\n/m, `defaults\n${LOGGING.defaults}`));
  // To a file, not a pipe: HAProxy drops log lines a pipe's reader is too busy to take.
  const log = join(dir, "haproxy.log");
  const child = spawn("sh", ["-c", `ulimit -Sn ${descriptors} && ulimit -Hn ${descriptors} && exec haproxy -db -f "$0" 2>"$1"`, config, log], {
    env: childEnv({ CADENCE_PROXY_BIND: `127.0.0.1:${port},::1:${port}`, CADENCE_TLS_CERT: bundle, CADENCE_UPSTREAM: upstream }),
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
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
