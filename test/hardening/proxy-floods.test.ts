import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Agent, request } from "node:https";
import { connect, type Socket } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { connect as connectTls, type TLSSocket } from "node:tls";
import postgres from "postgres";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { childEnv } from "../support/child-env.ts";
import { freshDatabase, type TestDatabase } from "../support/database.ts";
import { type RunningProxy, startProxy } from "../support/haproxy.ts";
import { type RedisServer, redisServerAvailable, startRedis } from "../support/redis.ts";
import { freePortRange, type RunningServer, startServer } from "../support/server.ts";
import { insertFleet, type Kiosk, layoutFleet, registerVenues } from "../simulate/fleet.ts";

const DENO = new URL("../../node_modules/.bin/deno", import.meta.url).pathname;
/** The burst of POST /api/v2/license, a Deno script the test runs as a process of its own. */
const LICENSE_FLOOD = new URL("../support/license-flood.ts", import.meta.url).pathname;
/** Idle and trickling connections reopened as fast as the proxy closes them, a Deno script of its own too. */
const REOPENING_FLOOD = new URL("../support/reopening-flood.ts", import.meta.url).pathname;
/** The descriptor limit the proxy and the workers run under, as on a host that allows no more. */
const DESCRIPTORS = 1024;
/**
 * functions/production/haproxy.cfg's caps per client (an IPv4 address or an IPv6 /64): past
 * `answered`, a request is answered 429; past `reset`, a connection is closed as it is accepted.
 * `open` counts connections open at once, `opened` new ones in 10 s. An IPv6 /48's are four times these.
 */
const CAPS = { answered: { open: 100, opened: 400, requests: 2_000 }, reset: { open: 250, opened: 1_000 } };
const PER_SITE = 4;
/** What the proxy answers past a cap: the app's own 429 (spec, section 7). */
const TOO_MANY = '{"message":"too many requests"}';
const SCHEDULE = "/api/v2/licenses/DEMO-0000-0000-0001/schedule";
/** The kiosk routes' limit per client address and minute (functions/app/rate-limit/rules.ts). */
const KIOSK_LIMIT = 10;
/**
 * The issue's bound on what a flood may add to the kiosk reads' 99th percentile: over their p99
 * without it, measured just before on the same machine (`readsAlone`). A read starved behind the
 * flood waits for the proxy's 10 s timeouts; a busy machine slows every read, flood or not (a p99
 * of 1,055 ms beside two CPU-bound processes failed the 1 s this once was on its own).
 */
const READ_P99_MS = 1_000;
/** Reads for that measure (the p99 of 40 is their slowest). */
const READS_ALONE = 40;
/**
 * A read unanswered by then has hung. Not a speed bound: once the proxy takes a connection, its own
 * timeouts (functions/production/haproxy.cfg: 10 s for the request, 10 s queued, 30 s for the
 * worker's answer) end it with a status, which the tests judge; before that it waits in the kernel's
 * queue behind the flood's connections for as long as this machine takes to go through them
 * (beside two CPU-bound processes, past the 10 s this once was).
 */
const READ_TIMEOUT_MS = 60_000;
/** The honest venues: each one's kiosks share one address, registered (in the app) for all of them. */
const BOOTING = { address: "127.0.6.1", kiosks: 200 };
const POLLING = { address: "127.0.6.2", kiosks: 300, everyMs: 15_000 };

let kioskAddress = 0;
/**
 * A loopback address of its own for each kiosk read (127.3.0.1 to 127.3.249.250), so the reads
 * never meet their own limit: at 10 a minute per address, 250 addresses ran out in a fast run.
 */
const nextKioskAddress = () => `127.3.${Math.floor(kioskAddress / 250) % 250}.${(kioskAddress++ % 250) + 1}`;

interface Answer {
  status: number;
  body: string;
  retryAfter?: string;
  connection?: string;
  etag?: string;
}

interface SendOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** A kiosk's connection, kept alive between its calls; a connection of its own by default. */
  agent?: Agent;
  /** The proxy's address to connect to: 127.0.0.1 by default, ::1 from an IPv6 address. */
  host?: string;
}

/**
 * One HTTPS request through the proxy from `localAddress`; rejects on a reset, and with ETIMEDOUT
 * when unanswered READ_TIMEOUT_MS after it started.
 */
function send(proxy: RunningProxy, path: string, localAddress: string, options: SendOptions = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const outgoing = request({
      host: options.host ?? "127.0.0.1", port: proxy.port, path, localAddress, agent: options.agent ?? false, ca: proxy.certificate, servername: "localhost",
      method: options.method ?? "GET", headers: options.headers ?? {},
    }, (incoming) => {
      let body = "";
      incoming.setEncoding("utf8");
      incoming.on("data", (chunk: string) => (body += chunk));
      incoming.on("end", () => {
        const { "retry-after": retryAfter, connection, etag } = incoming.headers;
        resolve({ status: incoming.statusCode ?? 0, body, ...(retryAfter && { retryAfter }), ...(connection && { connection }), ...(etag && { etag }) });
      });
      incoming.on("error", reject);
    });
    const deadline = setTimeout(() => outgoing.destroy(Object.assign(new Error("unanswered"), { code: "ETIMEDOUT" })), READ_TIMEOUT_MS);
    outgoing.on("close", () => clearTimeout(deadline));
    // Whether it went out on a kept-alive connection, for the caller to tell the keep-alive race.
    outgoing.on("error", (error) => reject(Object.assign(error, { reusedSocket: outgoing.reusedSocket })));
    outgoing.end(options.body);
  });
}

interface Read {
  address: string;
  /** Its status, or the error code that ended it. */
  outcome: string;
  /** From the request's start (its TCP connection) to the answer's end. */
  ms: number;
}

/**
 * The pause after each kiosk read. Kiosks sample the proxy while the flood runs; they are not part
 * of it. Back to back, the reads made ~4,000 TLS handshakes a run, and took CPU the flood and the
 * other suites need on two cores.
 */
const READ_PAUSE_MS = 50;

/** Kiosk schedule reads, one after another, each from an address of its own, until `done()`; at least `least` of them. */
async function readWhile(proxy: RunningProxy, done: () => boolean, least = 5): Promise<Read[]> {
  const reads: Read[] = [];
  while (reads.length < least || !done()) {
    const address = nextKioskAddress();
    const started = performance.now();
    const outcome = await send(proxy, SCHEDULE, address).then((a) => String(a.status), (error: NodeJS.ErrnoException) => error.code ?? error.message);
    reads.push({ address, outcome, ms: performance.now() - started });
    await new Promise((resolve) => setTimeout(resolve, READ_PAUSE_MS));
  }
  return reads;
}

/** The p99 of kiosk reads through the proxy with no flood. */
const readsAlone = async (proxy: RunningProxy) => timesOf(await readWhile(proxy, () => true, READS_ALONE)).p99;

/** The reads' 99th percentile and longest time, ms. */
function timesOf(reads: Read[]) {
  const ms = reads.map((read) => read.ms).sort((a, b) => a - b);
  return { p99: Math.round(ms[Math.ceil(ms.length * 0.99) - 1]), longest: Math.round(ms[ms.length - 1]) };
}

/** A flood run as a Deno process of its own: what it printed once it exits, and whether it still runs. */
function spawnFlood(script: string, argument: unknown) {
  const flood = spawn(DENO, ["run", "--allow-net", script, JSON.stringify(argument)], { env: childEnv(), stdio: ["ignore", "pipe", "inherit"] });
  let printed = "";
  flood.stdout.on("data", (chunk: Buffer) => (printed += chunk));
  let running = true;
  const finished = new Promise<string>((resolve, reject) => flood.once("exit", (code) => {
    running = false;
    if (code === 0) resolve(printed);
    else reject(new Error(`${script} exited with ${code}`));
  }));
  return { finished, running: () => running };
}

/** What test/support/reopening-flood.ts prints. */
interface ReopeningTally {
  attempts: number;
  refused: number;
  closedAfterMs: { shortest: number | null; longest: number };
  mostHeld: number;
  answers: Record<string, number>;
}

/** The longest TLS handshake HAProxy logged (`Th`, ms) for a connection from one of `addresses`. */
const longestHandshake = (proxy: RunningProxy, addresses: string[]) => {
  const from = new Set(addresses);
  const times = proxy.logs().split("\n").filter((line) => from.has(line.slice(0, line.indexOf(":")))).map((line) => Number(/ Th=(\d+) /.exec(line)?.[1] ?? 0));
  return Math.max(0, ...times);
};

/**
 * The connections from `address` HAProxy logged ending on its own client timeouts: a TLS handshake
 * it gave up on, or a request not received in time (termination state `c`, test/support/haproxy.ts's format).
 */
const endedOnClientTimeouts = (proxy: RunningProxy, address: string) =>
  proxy.logs().split("\n").filter((line) => line.startsWith(`${address}:`) && / SSL handshake| \d{3} c[A-Z-]{3} /.test(line)).length;

/** The reads that did not answer 200, each with what HAProxy logged of it: its own account of why. */
const failedReads = (proxy: RunningProxy, reads: Read[]) => {
  const logged = proxy.logs().split("\n");
  return reads.filter((read) => read.outcome !== "200").map((read) => ({ ...read, proxy: logged.filter((line) => line.startsWith(`${read.address}:`)) }));
};

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Polls `condition` every 50 ms; the test's own timeout bounds the wait. */
async function until(condition: () => boolean) {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 50));
}

/**
 * A TLS connection from `localAddress` to the proxy at `host` that sends nothing once its
 * handshake is done: `secure` once the proxy took it, `closed` if the proxy closed it first.
 */
function handshake(proxy: RunningProxy, host: string, localAddress: string) {
  const socket = connectTls({ socket: connect({ port: proxy.port, host, localAddress }), ca: proxy.certificate, servername: "localhost" });
  const watched = { socket, secure: false, closed: false };
  socket.on("secureConnect", () => (watched.secure = true));
  socket.on("error", () => {});
  socket.on("close", () => (watched.closed = true));
  return watched;
}

type Handshake = ReturnType<typeof handshake>;
/** Whether the proxy took the connection or closed it. */
const settled = (watched: Handshake) => watched.secure || watched.closed;

const counts = (outcomes: string[]) => outcomes.reduce<Record<string, number>>((all, o) => ({ ...all, [o]: (all[o] ?? 0) + 1 }), {});

/** What HAProxy logged of each request from `addresses` (test/support/haproxy.ts's log format). */
const loggedFrom = (proxy: RunningProxy, addresses: string[]) => {
  const from = new Set(addresses);
  return proxy.logs().split("\n").filter((line) => from.has(line.slice(0, line.lastIndexOf(":", line.indexOf(" ")))) && / \d{3} /.test(line));
};

/** Runs `use` with `addresses` given to `lo`, and takes each one it gave away again, however `use` ends. */
async function withAddresses(addresses: string[], use: () => Promise<void>) {
  const added: string[] = [];
  try {
    for (const address of addresses) {
      execFileSync("ip", ["-6", "addr", "add", `${address}/128`, "dev", "lo", "nodad"]);
      added.push(address);
    }
    await use();
  } finally {
    for (const address of added) execFileSync("ip", ["-6", "addr", "del", `${address}/128`, "dev", "lo"]);
  }
}

/**
 * `count` TCP connections from `localAddress` to the proxy at `host`, sending nothing, once each is
 * open: the proxy counts them as it accepts them, in order, so a connection made after them finds
 * them counted.
 */
async function openIdle(proxy: RunningProxy, host: string, localAddress: string, count: number): Promise<Socket[]> {
  return await Promise.all(Array.from({ length: count }, () => new Promise<Socket>((resolve, reject) => {
    const socket = connect({ port: proxy.port, host, localAddress }, () => resolve(socket));
    socket.on("error", reject);
  })));
}

/**
 * `count` new connections from `localAddress`, a hundred at a time, each ended once open and waited
 * for until the proxy has closed its side too: none is still open at the proxy when this returns.
 */
async function openAndClose(proxy: RunningProxy, host: string, localAddress: string, count: number) {
  for (let done = 0; done < count; done += 100) {
    await Promise.all(Array.from({ length: Math.min(100, count - done) }, () => new Promise<void>((resolve, reject) => {
      const socket = connect({ port: proxy.port, host, localAddress }, () => socket.end());
      socket.on("error", reject);
      socket.on("close", () => resolve());
    })));
  }
}

/** Runs `use` with `held`, and closes them however `use` ends. */
async function holding(held: Promise<Socket[]>, use: () => Promise<void>) {
  const sockets = await held;
  try {
    await use();
  } finally {
    for (const socket of sockets) socket.destroy();
  }
}

/** Whether a TLS connection from `localAddress` to the proxy at `host` was closed before its handshake ended (reset as it was accepted). */
async function resetBeforeTls(proxy: RunningProxy, host: string, localAddress: string) {
  const watched = handshake(proxy, host, localAddress);
  await until(() => settled(watched));
  watched.socket.destroy();
  return !watched.secure;
}

/** A unique-local /48 of this run's own (`fdxx:xxxx:xxxx`), so that runs beside it never share an address. */
const randomSite = () => `fd${randomBytes(5).toString("hex").replace(/^(..)(....)(....)$/, "$1:$2:$3")}`;

/**
 * A kiosk's call that follows what the proxy tells it: on a 429 with Retry-After it waits that long
 * and calls again (the proxy closed its connection; the agent opens the next). A reset or no answer
 * ends it, as a failure the test judges.
 */
async function patientCall(proxy: RunningProxy, path: string, localAddress: string, options: SendOptions, waited: number[], raced: string[] = []): Promise<Answer> {
  for (;;) {
    let answer: Answer;
    try {
      answer = await send(proxy, path, localAddress, options);
    } catch (error) {
      // HTTP/1.1's keep-alive race: the proxy closed a kept-alive connection (idle past `timeout
      // http-keep-alive`) as the kiosk sent on it, which a busy client may do long after its last
      // answer. The request never reached the proxy's HTTP layer; HTTP clients send it again on a new
      // connection (Node's documentation, `request.reusedSocket`; OkHttp, browsers). A reset of a new
      // connection is no such race, and fails the call.
      if ((error as NodeJS.ErrnoException).code !== "ECONNRESET" || !(error as { reusedSocket?: boolean }).reusedSocket) throw error;
      raced.push(path);
      continue;
    }
    if (answer.status !== 429 || answer.retryAfter === undefined) return answer;
    waited.push(Number(answer.retryAfter));
    await new Promise((resolve) => setTimeout(resolve, Number(answer.retryAfter) * 1_000));
  }
}

describe.skipIf(!redisServerAvailable())("HAProxy (functions/production/haproxy.cfg) in front of two workers, under ulimit -n 1024", () => {
  let database: TestDatabase;
  let redis: RedisServer;
  let workers: RunningServer;
  let proxy: RunningProxy;
  /** The venues' kiosks, registered for their addresses before the workers start (they read registrations then). */
  let booting: Kiosk[];
  let polling: Kiosk[];

  /**
   * The requests the limiter let through for `rule` from `address`, as Redis counted them: each
   * fixed window's count, up to the limit (a window's count past it was refused). Exact whichever
   * minute boundaries the requests straddled.
   */
  async function allowedByRedis(rule: string, address: string): Promise<number> {
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      const keys = await client.keys(`cadence:ratelimit:${rule}:${address}:*`);
      const windows = await Promise.all(keys.map((key) => client.get(key)));
      return windows.reduce((sum, count) => sum + Math.min(KIOSK_LIMIT, Number(count)), 0);
    } finally {
      await client.quit();
    }
  }

  beforeAll(async () => {
    database = await freshDatabase();
    // One account's kiosks, at two venues.
    const kiosks = BOOTING.kiosks + POLLING.kiosks;
    const fleet = layoutFleet(kiosks, { low: kiosks, high: kiosks }, 0);
    booting = fleet.slice(0, BOOTING.kiosks).map((kiosk) => ({ ...kiosk, address: BOOTING.address }));
    polling = fleet.slice(BOOTING.kiosks).map((kiosk) => ({ ...kiosk, address: POLLING.address }));
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      await insertFleet(sql, [...booting, ...polling]);
      await registerVenues(sql, [...booting, ...polling]);
    } finally {
      await sql.end();
    }
    redis = await startRedis();
    // Ports of their own (PORT + i - 1, ADMIN_PORT + i - 1), which the proxy follows.
    const settings = { PORT: String(await freePortRange(2)), ADMIN_PORT: String(await freePortRange(2)), DENO_JOBS: "2" };
    workers = await startServer(
      { DATABASE_URL: database.url, REDIS_URL: redis.url, CLIENT_IP_HEADER: "x-real-ip", ...settings },
      undefined,
      { startScript: true, script: "start:workers", ulimit: { soft: DESCRIPTORS } },
    );
    proxy = await startProxy(settings, DESCRIPTORS);
    // The workers answered through the proxy before any flood.
    expect((await send(proxy, SCHEDULE, nextKioskAddress())).status).toBe(200);
  });
  afterAll(async () => {
    await proxy?.stop();
    await workers?.stop();
    await redis?.stop();
    await database?.drop();
  });

  it("keeps kiosk reads within 1 s of their time alone while 400 idle connections from one address reopen as fast as the proxy closes them: it holds 250 and resets the rest", async () => {
    // One address: two at their flood cap (2 x 250) would hold the 497 connections HAProxy takes under
    // ulimit -n 1024 (functions/README.md, "Connection floods", measures that limit).
    const alone = await readsAlone(proxy);
    const addresses = ["127.0.1.1"];
    const flood = spawnFlood(REOPENING_FLOOD, { port: proxy.port, addresses, perAddress: 400, seconds: 20, kind: "idle" });
    const reads = await readWhile(proxy, () => !flood.running());
    const tally: ReopeningTally = JSON.parse(await flood.finished);
    console.log(`400 idle connections from one address reopened for 20 s: ${JSON.stringify(tally)}; kiosk reads meanwhile ${JSON.stringify(counts(reads.map((read) => read.outcome)))}, ${JSON.stringify(timesOf(reads))} ms, p99 alone ${alone} ms`);
    expect(failedReads(proxy, reads)).toEqual([]);
    expect(timesOf(reads).p99).toBeLessThan(alone + READ_P99_MS);
    // The address held no more than its flood cap; the proxy refused the rest and closed what it held.
    expect(tally.mostHeld).toBeLessThanOrEqual(CAPS.reset.open);
    expect(tally.refused).toBeGreaterThan(0);
    expect(tally.closedAfterMs.longest).toBeGreaterThan(0);
    expect(alive(proxy.pid)).toBe(true);
    expect(alive(workers.pid)).toBe(true);
  });

  it("keeps kiosk reads within 1 s of their time alone while 140 connections from two addresses trickle their bodies, and lets none of those requests reach the workers", async () => {
    const alone = await readsAlone(proxy);
    const addresses = ["127.0.5.1", "127.0.5.2"];
    const flood = spawnFlood(REOPENING_FLOOD, {
      port: proxy.port, addresses, perAddress: 70, seconds: 15, kind: "trickled-body", ca: proxy.certificate, path: "/api/v2/license",
    });
    const reads = await readWhile(proxy, () => !flood.running());
    const tally: ReopeningTally = JSON.parse(await flood.finished);
    const logged = loggedFrom(proxy, addresses);
    console.log(`140 trickled bodies for 15 s: ${JSON.stringify(tally)}; kiosk reads meanwhile ${JSON.stringify(counts(reads.map((read) => read.outcome)))}, ${JSON.stringify(timesOf(reads))} ms, p99 alone ${alone} ms`);
    expect(failedReads(proxy, reads)).toEqual([]);
    expect(timesOf(reads).p99).toBeLessThan(alone + READ_P99_MS);
    // Each trickled request the proxy held was answered 408 once its body's time ran out ...
    expect(Object.keys(tally.answers)).toEqual(["HTTP/1.1 408"]);
    expect(logged.length).toBeGreaterThan(0);
    // ... and none of them was ever sent to the workers: no queue, no server connection (%Tw/%Tc = -1).
    expect(logged.filter((line) => !/ -?\d+\/-1\/-1\/-1\/\d+ 408 /.test(line))).toEqual([]);
    expect(alive(proxy.pid)).toBe(true);
    expect(alive(workers.pid)).toBe(true);
  });

  it("closes slowloris clients that trickle their headers while kiosk reads answer 200", async () => {
    // From two addresses, so that the per-client cap lets every one of them in to trickle.
    const tricklers: Array<{ socket: TLSSocket; closed: boolean; received: string; lines: number }> = Array.from({ length: 50 }, (_, i) => {
      const tcp = connect({ port: proxy.port, host: "127.0.0.1", localAddress: `127.0.1.${20 + (i % 2)}` });
      const socket = connectTls({ socket: tcp, ca: proxy.certificate, servername: "localhost" });
      const trickler = { socket, closed: false, received: "", lines: 0 };
      socket.setEncoding("utf8");
      // Written now, so it goes first: a TLS socket sends what it holds once the handshake is done.
      socket.write(`GET ${SCHEDULE} HTTP/1.1\r\nHost: localhost\r\n`);
      socket.on("data", (chunk: string) => (trickler.received += chunk));
      socket.on("error", () => {});
      socket.on("close", () => (trickler.closed = true));
      return trickler;
    });
    // A header line every half second, never the blank line that ends them.
    const trickle = setInterval(() => {
      for (const trickler of tricklers) if (!trickler.closed && trickler.socket.writable) trickler.socket.write(`X-Trickle-${trickler.lines++}: x\r\n`);
    }, 500);
    try {
      const outcomes = await readWhile(proxy, () => tricklers.every((trickler) => trickler.closed));
      console.log(`slowloris: 50 clients closed after ${Math.max(...tricklers.map((t) => t.lines))} header lines at most, answered ${JSON.stringify(counts(tricklers.map((t) => t.received.slice(0, 12) || "nothing")))}; kiosk reads meanwhile ${JSON.stringify(counts(outcomes.map((read) => read.outcome)))}, ${JSON.stringify(timesOf(outcomes))} ms`);
      expect(failedReads(proxy, outcomes)).toEqual([]);
      expect(tricklers.every((trickler) => trickler.lines > 1)).toBe(true);
      expect(tricklers.every((trickler) => trickler.received === "" || trickler.received.startsWith("HTTP/1.1 408"))).toBe(true);
    } finally {
      clearInterval(trickle);
    }
    expect(alive(proxy.pid)).toBe(true);
    expect(alive(workers.pid)).toBe(true);
  });

  it("keeps kiosk reads answering 200 through a wrk -c1500 burst", async () => {
    // wrk holds 1,500 connections: its own descriptor limit is raised for it.
    const wrk = spawn("sh", ["-c", `ulimit -n 4096 && exec wrk -t2 -c1500 -d5s "$0"`, `${proxy.url}/api/v2/frequencies`], { stdio: ["ignore", "pipe", "pipe"] });
    let report = "";
    wrk.stdout.on("data", (chunk: Buffer) => (report += chunk));
    wrk.stderr.on("data", (chunk: Buffer) => (report += chunk));
    const finished = new Promise<number | null>((resolve) => wrk.once("exit", (code) => resolve(code)));
    let running = true;
    void finished.then(() => (running = false));
    const outcomes = await readWhile(proxy, () => !running);
    expect(await finished).toBe(0);
    console.log(`wrk -c1500: ${report.match(/\d+ requests in [^\n]+/)?.[0]}; ${report.match(/Socket errors:[^\n]+/)?.[0] ?? "no socket errors"}; kiosk reads meanwhile ${JSON.stringify(counts(outcomes.map((read) => read.outcome)))}, ${JSON.stringify(timesOf(outcomes))} ms`);
    expect(report).toMatch(/\d+ requests in/);
    expect(failedReads(proxy, outcomes)).toEqual([]);
    expect(alive(proxy.pid)).toBe(true);
    expect(alive(workers.pid)).toBe(true);
  });

  it("answers 1,500 concurrent POST /api/v2/license from fifty addresses with exactly the limit each, while kiosk reads answer 200", async () => {
    // Thirty from each address, within the per-client cap, so that the cap refuses none.
    const addresses = Array.from({ length: 50 }, (_, i) => `127.0.2.${i + 1}`);
    const perAddress = 30;
    const body = JSON.stringify({ license_key: "DEMO-0000-0000-0001", email_address: "demo@example.com" });
    // The burst runs in a process of its own: its 1,500 TLS handshakes on this event loop would delay
    // the reads' own past the proxy's `timeout client`, and the proxy would close them (a reset).
    const flood = spawnFlood(LICENSE_FLOOD, { port: proxy.port, ca: proxy.certificate, addresses, perAddress, body });
    const reads = await readWhile(proxy, () => !flood.running());
    const answers: Array<{ address: string; outcome: string }> = JSON.parse(await flood.finished);
    expect(answers).toHaveLength(addresses.length * perAddress);
    // 200 or 429 once the limit counted it; 503 (Retry-After) when the machine could not keep up:
    // the proxy's queue bound (`timeout queue`, logged sQ) or the app's admission bound, the
    // overload answer functions/README.md promises. A run under a profiler met the queue's once.
    const limited = (a: { outcome: string }) => a.outcome === "200" || a.outcome === "429";
    const answered = (a: { outcome: string }) => limited(a) || a.outcome === "503";
    console.log(`1,500 concurrent POST /api/v2/license: ${JSON.stringify(counts(answers.map((a) => a.outcome)))}; kiosk reads meanwhile ${JSON.stringify(counts(reads.map((read) => read.outcome)))}, ${JSON.stringify(timesOf(reads))} ms; longest TLS handshake at the proxy: burst ${longestHandshake(proxy, addresses)} ms, reads ${longestHandshake(proxy, reads.map((read) => read.address))} ms`);
    expect(failedReads(proxy, reads)).toEqual([]);
    // The proxy gives a connection 10 s from its accept for its TLS handshake and request, as against
    // a slowloris: beside two CPU-bound processes the burst's handshakes took that long, and 181-263
    // of its requests were ended so (ECONNRESET, EPIPE), never reaching the app. Each request left
    // unanswered must be one the proxy logged ending on those client timeouts, from its address.
    for (const address of addresses) {
      const unanswered = answers.filter((a) => a.address === address && !answered(a)).length;
      const logged = proxy.logs().split("\n").filter((line) => line.startsWith(`${address}:`) && !/ (200|429|503) /.test(line));
      expect(unanswered, logged.join("\n")).toBeLessThanOrEqual(endedOnClientTimeouts(proxy, address));
    }
    for (const address of addresses) {
      const allowed = answers.filter((a) => a.address === address && a.outcome === "200").length;
      // A window's worth (or every answer, if fewer), and exactly what Redis let through for that address.
      expect(allowed).toBeGreaterThanOrEqual(Math.min(KIOSK_LIMIT, answers.filter((a) => a.address === address && limited(a)).length));
      expect(allowed).toBe(await allowedByRedis("license", address));
    }
    expect(alive(proxy.pid)).toBe(true);
    expect(alive(workers.pid)).toBe(true);
  });

  it("answers what it refuses itself as the app does, JSON with a message: a body over 64 KiB, a head over 15 KiB", async () => {
    const json = { "content-type": "application/json" };
    const body = await send(proxy, "/api/v2/license", "127.0.4.3", { method: "POST", headers: json, body: "x".repeat(65 * 1024) });
    expect(body).toMatchObject({ status: 413, body: '{"message":"request body must not exceed 64 KiB"}' });
    const head = await send(proxy, "/api/v2/frequencies", "127.0.4.3", { headers: { "x-padding": "y".repeat(16 * 1024) } });
    expect(head).toMatchObject({ status: 400, body: '{"message":"request head must not exceed 15 KiB"}' });
  });

  it("counts a client by the address the proxy saw, whatever X-Real-IP it sent", async () => {
    const address = "127.0.4.1";
    const answers = [];
    // Twice the limit and one: even split across two windows, some must be refused.
    for (let i = 0; i < 2 * KIOSK_LIMIT + 1; i++) {
      answers.push((await send(proxy, SCHEDULE, address, { headers: { "x-real-ip": `203.0.113.${i}` } })).status);
    }
    const allowed = answers.filter((status) => status === 200).length;
    expect(answers.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect(allowed).toBe(await allowedByRedis("license-schedule", address));
    expect(allowed).toBeLessThan(answers.length);
  });

  it("answers 40 parallel reads from one address, exactly the limit with 200 and the rest 429", async () => {
    const address = "127.0.4.2";
    const answers = await Promise.all(Array.from({ length: 40 }, () => send(proxy, SCHEDULE, address).then((a) => a.status)));
    const allowed = answers.filter((status) => status === 200).length;
    expect(answers.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect(allowed).toBeGreaterThanOrEqual(KIOSK_LIMIT);
    expect(allowed).toBe(await allowedByRedis("license-schedule", address));
  });

  it("answers a client's request past 100 open connections 429 with Retry-After 2 and the app's message, closing that connection", async () => {
    const address = "127.0.7.1";
    await holding(openIdle(proxy, "127.0.0.1", address, CAPS.answered.open), async () => {
      expect(await send(proxy, SCHEDULE, address)).toEqual({ status: 429, body: TOO_MANY, retryAfter: "2", connection: "close" });
    });
  });

  it("closes a client's connection past 250 open ones as it accepts it, before TLS", async () => {
    const address = "127.0.7.2";
    await holding(openIdle(proxy, "127.0.0.1", address, CAPS.reset.open), async () => {
      // Connected is not yet counted: HAProxy's threads track accepted connections in their own
      // time, and on a busy machine a probe sent at once was judged before the last of them.
      await vi.waitFor(async () => expect(await proxy.openCount(address)).toBe(CAPS.reset.open), { timeout: READ_TIMEOUT_MS, interval: 50 });
      expect(await resetBeforeTls(proxy, "127.0.0.1", address)).toBe(true);
    });
  });

  it("answers a client's request past 400 new connections in 10 s 429 with Retry-After 10", async () => {
    const address = "127.0.7.3";
    await openAndClose(proxy, "127.0.0.1", address, CAPS.answered.opened);
    expect(await send(proxy, SCHEDULE, address)).toEqual({ status: 429, body: TOO_MANY, retryAfter: "10", connection: "close" });
  });

  it("closes a client's connection past 1,000 new ones in 10 s as it accepts it, before TLS", async () => {
    const address = "127.0.7.4";
    await openAndClose(proxy, "127.0.0.1", address, CAPS.reset.opened);
    expect(await resetBeforeTls(proxy, "127.0.0.1", address)).toBe(true);
  });

  it("answers a client's requests past 2,000 in 10 s on its kept-alive connections 429 with Retry-After 10", async () => {
    // The catalogue read: no limit of the app's, so every answer before the cap's is a 200. Eight
    // kept-alive connections of one address at once, so the client reaches the rate even on a busy
    // machine, where one connection's calls in a row came 140 a second, under the cap's 200.
    const address = "127.0.7.5";
    const statuses: number[] = [];
    const refusals: Answer[] = [];
    await Promise.all(Array.from({ length: 8 }, async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        while (refusals.length === 0 && statuses.length <= 20 * CAPS.answered.requests) {
          const answer = await send(proxy, "/api/v2/frequencies", address, { agent });
          statuses.push(answer.status);
          if (answer.status !== 200) refusals.push(answer);
        }
      } finally {
        agent.destroy();
      }
    }));
    expect(counts(statuses.map(String))[200]).toBeGreaterThanOrEqual(CAPS.answered.requests);
    expect(refusals.length).toBeGreaterThan(0);
    for (const refusal of refusals) expect(refusal).toEqual({ status: 429, body: TOO_MANY, retryAfter: "10", connection: "close" });
  });

  it("serves a venue of 200 kiosks booting within a second behind one address: every call ends 200, those told to wait following Retry-After", async () => {
    const json = { "content-type": "application/json" };
    const waited: number[] = [];
    const raced: string[] = [];
    const started = performance.now();
    const agents = booting.map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
    // How late this process ran its callbacks: a kiosk that reads an answer more than the proxy's
    // `timeout http-keep-alive` (2 s) late sends its next call on a connection the proxy has closed
    // meanwhile, and that call is reset; that is what `raced` counts.
    const lateness = monitorEventLoopDelay({ resolution: 10 });
    lateness.enable();
    try {
      // Each boots at its moment of the second, its calls in a row: license validation, its schedule, its proclamations.
      const boots = await Promise.all(booting.map(async (kiosk, i) => {
        await new Promise((resolve) => setTimeout(resolve, (i / booting.length) * 1_000));
        const call = (path: string, options: SendOptions) => patientCall(proxy, path, BOOTING.address, { ...options, agent: agents[i] }, waited, raced).then((answer) => answer.status, (error: NodeJS.ErrnoException) => error.code ?? error.message);
        const license = await call("/api/v2/license", { method: "POST", headers: json, body: JSON.stringify({ license_key: kiosk.key, email_address: kiosk.email }) });
        const schedule = await call(`/api/v2/licenses/${kiosk.key}/schedule`, {});
        const proclamations = await call("/api/v2/proclamations", { headers: { "x-license-key": kiosk.key, "x-email": kiosk.email } });
        return { answers: [license, schedule, proclamations], ms: performance.now() - started };
      }));
      console.log(`a venue of ${BOOTING.kiosks} kiosks booting within a second: ${JSON.stringify(counts(boots.flatMap((boot) => boot.answers.map(String))))}; told to wait (Retry-After, s): ${JSON.stringify(counts(waited.map(String)))}; sent again after a kept-alive connection closed as it was reused: ${raced.length}; the last kiosk had its answers after ${Math.round(Math.max(...boots.map((boot) => boot.ms)))} ms; this process ran up to ${Math.round(lateness.max / 1e6)} ms late`);
      // A failure shows what the proxy saw: its workers marked down or up (a worker marked down has
      // its requests cut: on-marked-down shutdown-sessions), and the venue's connections that ended
      // otherwise than normally (the termination state after the status, `----` when normal).
      const seen = proxy.logs().split("\n").filter((line) => /Server \S+ is (DOWN|UP)/.test(line) || (line.startsWith(`${BOOTING.address}:`) && !/ \d{3} ----/.test(line)));
      expect(boots.flatMap((boot) => boot.answers).filter((status) => status !== 200), seen.slice(0, 40).join("\n")).toEqual([]);
    } finally {
      lateness.disable();
      for (const agent of agents) agent.destroy();
    }
  });

  it("closes a kept-alive connection idle for 2 s, so a call a late client sends on it is reset, and sent again on a new connection is answered: HTTP/1.1's keep-alive race, which the venue's kiosks meet when this process runs more than 2 s late", async () => {
    const address = nextKioskAddress();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await send(proxy, SCHEDULE, address, { agent })).status).toBe(200);
      // This thread stops for 4 s, as a starved client does: the proxy's close (timeout
      // http-keep-alive 2s) reaches the connection meanwhile, unread, and the next call goes out on it.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 4_000);
      await expect(send(proxy, SCHEDULE, address, { agent })).rejects.toMatchObject({ code: "ECONNRESET", reusedSocket: true });
      expect((await send(proxy, SCHEDULE, address, { agent })).status).toBe(200);
    } finally {
      agent.destroy();
    }
  });

  it("serves 300 kiosks polling every 15 s behind one address: every poll answered 200 or 304, none told to wait", async () => {
    const outcomes: string[] = [];
    await Promise.all(polling.map(async (kiosk, i) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      let etag: string | undefined;
      try {
        // Two polls each, the kiosks' spread over the interval: a steady 20 polls a second from the address.
        await new Promise((resolve) => setTimeout(resolve, (i / polling.length) * POLLING.everyMs));
        for (let poll = 0; poll < 2; poll++) {
          const started = performance.now();
          const answer = await send(proxy, `/api/v2/licenses/${kiosk.key}/schedule`, POLLING.address, { agent, headers: etag ? { "if-none-match": etag } : {} })
            .catch((error: NodeJS.ErrnoException) => ({ status: error.code ?? error.message, etag: undefined }));
          outcomes.push(String(answer.status));
          etag = answer.etag ?? etag;
          if (poll === 0) await new Promise((resolve) => setTimeout(resolve, Math.max(0, POLLING.everyMs - (performance.now() - started))));
        }
      } finally {
        agent.destroy();
      }
    }));
    console.log(`${POLLING.kiosks} kiosks polling every 15 s behind one address: ${JSON.stringify(counts(outcomes))}`);
    expect(outcomes.filter((outcome) => outcome !== "200" && outcome !== "304")).toEqual([]);
    expect(outcomes).toHaveLength(2 * POLLING.kiosks);
  });

  it("counts an IPv6 /64 as one client: past 250 open connections, one from any of its addresses is closed before TLS", async () => {
    const site = randomSite();
    const rotating = [`${site}:1::1`, `${site}:1::2:3`, `${site}:1:4:5:6:7`, `${site}:1:ffff:ffff:ffff:fffe`];
    const neighbour = `${site}:2::1`;
    await withAddresses([...rotating, neighbour], async () => {
      // One end site rotating through four addresses holds as many connections as one client may ...
      const held = Promise.all(Array.from({ length: CAPS.reset.open }, (_, i) => openIdle(proxy, "::1", rotating[i % rotating.length], 1))).then((all) => all.flat());
      await holding(held, async () => {
        await vi.waitFor(async () => expect(await proxy.openCount(`${site}:1::`)).toBe(CAPS.reset.open), { timeout: READ_TIMEOUT_MS, interval: 50 });
        // ... so one more from any of its addresses is refused, though each holds only a quarter of
        // them; the next /64 is another client.
        for (const address of rotating) expect(await resetBeforeTls(proxy, "::1", address)).toBe(true);
        expect(await resetBeforeTls(proxy, "::1", neighbour)).toBe(false);
      });
    });
  });

  it("counts an IPv6 /48 as one site: past 400 open connections from its /64s, a request from another of them is answered 429; another /48 is served", async () => {
    const site = randomSite();
    const clients = Array.from({ length: PER_SITE }, (_, i) => `${site}:${i + 1}::1`);
    const another = `${site}:${PER_SITE + 1}::1`;
    const elsewhere = `${randomSite()}:1::1`;
    await withAddresses([...clients, another, elsewhere], async () => {
      // Each /64 at its own share (100), none past it: together at the site's.
      const held = Promise.all(clients.map((address) => openIdle(proxy, "::1", address, CAPS.answered.open))).then((all) => all.flat());
      await holding(held, async () => {
        await vi.waitFor(async () => expect(await proxy.openCount(`${site}::`, "per-site")).toBe(PER_SITE * CAPS.answered.open), { timeout: READ_TIMEOUT_MS, interval: 50 });
        expect(await send(proxy, SCHEDULE, another, { host: "::1" })).toEqual({ status: 429, body: TOO_MANY, retryAfter: "2", connection: "close" });
        expect((await send(proxy, SCHEDULE, elsewhere, { host: "::1" })).status).toBe(200);
      });
    });
  });

  it("counts an IPv6 /48 as one site: past 4,000 new connections in 10 s from its /64s, one from another of them is closed before TLS", async () => {
    // The site's 1,000 open connections are past the 497 HAProxy takes under ulimit -n 1024: its rate is what this suite reaches.
    const site = randomSite();
    const clients = Array.from({ length: PER_SITE }, (_, i) => `${site}:${i + 1}::1`);
    const another = `${site}:${PER_SITE + 1}::1`;
    await withAddresses([...clients, another], async () => {
      // Each /64 at its own flood cap (1,000), none past it.
      await Promise.all(clients.map((address) => openAndClose(proxy, "::1", address, CAPS.reset.opened)));
      expect(await resetBeforeTls(proxy, "::1", another)).toBe(true);
    });
  });
});
