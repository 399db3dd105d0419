import { spawn } from "node:child_process";
import { request } from "node:https";
import { connect, type Socket } from "node:net";
import { connect as connectTls, type TLSSocket } from "node:tls";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv } from "../support/child-env.ts";
import { freshDatabase, type TestDatabase } from "../support/database.ts";
import { type RunningProxy, startProxy } from "../support/haproxy.ts";
import { type RedisServer, redisServerAvailable, startRedis } from "../support/redis.ts";
import { type RunningServer, startServer } from "../support/server.ts";

const DENO = new URL("../../node_modules/.bin/deno", import.meta.url).pathname;
/** The burst of POST /api/v2/license, a Deno script the test runs as a process of its own. */
const LICENSE_FLOOD = new URL("../support/license-flood.ts", import.meta.url).pathname;
/** The descriptor limit the proxy and the workers run under, as on a host that allows no more. */
const DESCRIPTORS = 1024;
/** The per-client cap in functions/production/haproxy.cfg. */
const PER_CLIENT = 100;
const SCHEDULE = "/api/v2/licenses/DEMO-0000-0000-0001/schedule";
/** The kiosk routes' limit per client address and minute (functions/app/rate-limit/rules.ts). */
const KIOSK_LIMIT = 10;

let kioskAddress = 0;
/**
 * A loopback address of its own for each kiosk read (127.3.0.1 to 127.3.249.250), so the reads
 * never meet their own limit: at 10 a minute per address, 250 addresses ran out in a fast run.
 */
const nextKioskAddress = () => `127.3.${Math.floor(kioskAddress / 250) % 250}.${(kioskAddress++ % 250) + 1}`;

interface Answer {
  status: number;
  body: string;
}

/** One HTTPS GET through the proxy from `localAddress`, on a connection of its own; rejects on a reset. */
function send(proxy: RunningProxy, path: string, localAddress: string, headers: Record<string, string> = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const outgoing = request({
      host: "127.0.0.1", port: proxy.port, path, localAddress, agent: false, ca: proxy.certificate, servername: "localhost", headers,
    }, (incoming) => {
      let body = "";
      incoming.setEncoding("utf8");
      incoming.on("data", (chunk: string) => (body += chunk));
      incoming.on("end", () => resolve({ status: incoming.statusCode ?? 0, body }));
      incoming.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}

interface Read {
  address: string;
  /** Its status, or the error code that ended it. */
  outcome: string;
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
    reads.push({ address, outcome: await send(proxy, SCHEDULE, address).then((a) => String(a.status), (error: NodeJS.ErrnoException) => error.code ?? error.message) });
    await new Promise((resolve) => setTimeout(resolve, READ_PAUSE_MS));
  }
  return reads;
}

/** The longest TLS handshake HAProxy logged (`Th`, ms) for a connection from one of `addresses`. */
const longestHandshake = (proxy: RunningProxy, addresses: string[]) => {
  const from = new Set(addresses);
  const times = proxy.logs().split("\n").filter((line) => from.has(line.slice(0, line.indexOf(":")))).map((line) => Number(/ Th=(\d+) /.exec(line)?.[1] ?? 0));
  return Math.max(0, ...times);
};

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

/** A TCP connection from `localAddress` that sends nothing; `closed` once the proxy closes it. */
function idle(port: number, localAddress: string) {
  const watched = { socket: connect({ port, host: "127.0.0.1", localAddress }) as Socket, connected: false, closed: false };
  watched.socket.on("connect", () => (watched.connected = true));
  watched.socket.on("error", () => {});
  watched.socket.on("close", () => (watched.closed = true));
  return watched;
}

const counts = (outcomes: string[]) => outcomes.reduce<Record<string, number>>((all, o) => ({ ...all, [o]: (all[o] ?? 0) + 1 }), {});

describe.skipIf(!redisServerAvailable())("HAProxy (functions/production/haproxy.cfg) in front of two workers, under ulimit -n 1024", () => {
  let database: TestDatabase;
  let redis: RedisServer;
  let workers: RunningServer;
  let proxy: RunningProxy;

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
    redis = await startRedis();
    workers = await startServer(
      { DATABASE_URL: database.url, REDIS_URL: redis.url, CLIENT_IP_HEADER: "x-real-ip", DENO_JOBS: "2" },
      undefined,
      { startScript: true, script: "start:workers", ulimit: { soft: DESCRIPTORS } },
    );
    proxy = await startProxy(`127.0.0.1:${new URL(workers.url).port}`, DESCRIPTORS);
    // The workers answered through the proxy before any flood.
    expect((await send(proxy, SCHEDULE, nextKioskAddress())).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await proxy?.stop();
    await workers?.stop();
    await redis?.stop();
    await database?.drop();
  });

  it("holds 1,100 idle connections from eleven addresses while kiosk reads answer 200, then closes them", async () => {
    const flood = Array.from({ length: 1_100 }, (_, i) => idle(proxy.port, `127.0.1.${1 + (i % 11)}`));
    await until(() => flood.every((watched) => watched.connected || watched.closed));
    let reading = true;
    const reads = readWhile(proxy, () => !reading);
    // Idle connections hold no slot for ever: the proxy closes each (timeout client, 10 s).
    await until(() => flood.every((watched) => watched.closed));
    reading = false;
    const outcomes = await reads;
    console.log(`1,100 idle connections: all closed by the proxy; kiosk reads meanwhile ${JSON.stringify(counts(outcomes.map((read) => read.outcome)))}`);
    expect(failedReads(proxy, outcomes)).toEqual([]);
    expect(alive(proxy.pid)).toBe(true);
    expect(alive(workers.pid)).toBe(true);
  }, 120_000);

  it("closes slowloris clients that trickle their headers while kiosk reads answer 200", async () => {
    const tricklers: Array<{ socket: TLSSocket; closed: boolean; received: string; lines: number }> = Array.from({ length: 50 }, () => {
      const tcp = connect({ port: proxy.port, host: "127.0.0.1", localAddress: "127.0.1.20" });
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
      console.log(`slowloris: 50 clients closed after ${Math.max(...tricklers.map((t) => t.lines))} header lines at most, answered ${JSON.stringify(counts(tricklers.map((t) => t.received.slice(0, 12) || "nothing")))}; kiosk reads meanwhile ${JSON.stringify(counts(outcomes.map((read) => read.outcome)))}`);
      expect(failedReads(proxy, outcomes)).toEqual([]);
      expect(tricklers.every((trickler) => trickler.lines > 1)).toBe(true);
      expect(tricklers.every((trickler) => trickler.received === "" || trickler.received.startsWith("HTTP/1.1 408"))).toBe(true);
    } finally {
      clearInterval(trickle);
    }
    expect(alive(proxy.pid)).toBe(true);
    expect(alive(workers.pid)).toBe(true);
  }, 120_000);

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
    console.log(`wrk -c1500: ${report.match(/\d+ requests in [^\n]+/)?.[0]}; ${report.match(/Socket errors:[^\n]+/)?.[0] ?? "no socket errors"}; kiosk reads meanwhile ${JSON.stringify(counts(outcomes.map((read) => read.outcome)))}`);
    expect(report).toMatch(/\d+ requests in/);
    expect(failedReads(proxy, outcomes)).toEqual([]);
    expect(alive(proxy.pid)).toBe(true);
    expect(alive(workers.pid)).toBe(true);
  }, 120_000);

  it("answers 1,500 concurrent POST /api/v2/license from fifteen addresses with exactly the limit each, while kiosk reads answer 200", async () => {
    const addresses = Array.from({ length: 15 }, (_, i) => `127.0.2.${i + 1}`);
    const body = JSON.stringify({ license_key: "DEMO-0000-0000-0001", email_address: "demo@example.com" });
    // The burst runs in a process of its own: its 1,500 TLS handshakes on this event loop would delay
    // the reads' own past the proxy's `timeout client`, and the proxy would close them (a reset).
    const flood = spawn(DENO, ["run", "--allow-net", LICENSE_FLOOD, JSON.stringify({ port: proxy.port, ca: proxy.certificate, addresses, perAddress: PER_CLIENT, body })], {
      env: childEnv(), stdio: ["ignore", "pipe", "inherit"],
    });
    let printed = "";
    flood.stdout.on("data", (chunk: Buffer) => (printed += chunk));
    let writing = true;
    const finished = new Promise<number | null>((resolve) => flood.once("exit", (code) => resolve(code)));
    void finished.then(() => (writing = false));
    const reads = await readWhile(proxy, () => !writing);
    expect(await finished).toBe(0);
    const answers: Array<{ address: string; outcome: string }> = JSON.parse(printed);
    expect(answers).toHaveLength(addresses.length * PER_CLIENT);
    console.log(`1,500 concurrent POST /api/v2/license: ${JSON.stringify(counts(answers.map((a) => a.outcome)))}; kiosk reads meanwhile ${JSON.stringify(counts(reads.map((read) => read.outcome)))}; longest TLS handshake at the proxy: burst ${longestHandshake(proxy, addresses)} ms, reads ${longestHandshake(proxy, reads.map((read) => read.address))} ms`);
    expect(failedReads(proxy, reads)).toEqual([]);
    expect(answers.filter((a) => a.outcome !== "200" && a.outcome !== "429")).toEqual([]);
    for (const address of addresses) {
      const allowed = answers.filter((a) => a.address === address && a.outcome === "200").length;
      // At least one window's worth, and exactly what Redis let through for that address.
      expect(allowed).toBeGreaterThanOrEqual(KIOSK_LIMIT);
      expect(allowed).toBe(await allowedByRedis("license", address));
    }
    expect(alive(proxy.pid)).toBe(true);
    expect(alive(workers.pid)).toBe(true);
  }, 180_000);

  it("counts a client by the address the proxy saw, whatever X-Real-IP it sent", async () => {
    const address = "127.0.4.1";
    const answers = [];
    // Twice the limit and one: even split across two windows, some must be refused.
    for (let i = 0; i < 2 * KIOSK_LIMIT + 1; i++) {
      answers.push((await send(proxy, SCHEDULE, address, { "x-real-ip": `203.0.113.${i}` })).status);
    }
    const allowed = answers.filter((status) => status === 200).length;
    expect(answers.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect(allowed).toBe(await allowedByRedis("license-schedule", address));
    expect(allowed).toBeLessThan(answers.length);
  }, 60_000);
});
