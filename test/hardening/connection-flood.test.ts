import { execFileSync } from "node:child_process";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scopedDatabase } from "../support/database.ts";
import { startServer, type RunningServer } from "../support/server.ts";

/** Low enough that a test can hold more connections than the limit, high enough for the server itself. */
const LIMIT = 256;
const FLOOD = LIMIT + 100;
const REQUEST = "GET /api/v2/frequencies HTTP/1.1\r\nHost: cadence.test\r\n\r\n";

/** A socket that reports what the server did to it: bytes received, and whether the server closed it. */
interface Watched {
  socket: Socket;
  received: string;
  connected: boolean;
  closed: boolean;
}

function open(url: string): Watched {
  const { hostname, port } = new URL(url);
  const watched: Watched = { socket: connect(Number(port), hostname), received: "", connected: false, closed: false };
  watched.socket.setEncoding("utf8");
  watched.socket.on("connect", () => (watched.connected = true));
  watched.socket.on("data", (chunk: string) => (watched.received += chunk));
  watched.socket.on("error", () => {});
  watched.socket.on("close", () => (watched.closed = true));
  return watched;
}

/** Polls `condition` every 50 ms; the test's own timeout bounds the wait. */
async function until(condition: () => boolean) {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** How many 200 answers a socket has received. */
const answered = (watched: Watched) => watched.received.split("HTTP/1.1 200").length - 1;

function listening(server: RunningServer): { fileDescriptorLimit: number | string; maxConnections: number } {
  const line = server.logs().split("\n").find((entry) => entry.includes('"event":"listening"'));
  return JSON.parse(line ?? "{}");
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("npm start under a connection flood", () => {
  const database = scopedDatabase();
  let server: RunningServer;
  const sockets: Watched[] = [];

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: database.url }, undefined, { startScript: true, ulimit: { soft: LIMIT } });
  });
  afterAll(async () => {
    for (const watched of sockets) watched.socket.destroy();
    await server?.stop();
  });

  it(`holds ${FLOOD} idle connections under ulimit -n ${LIMIT}: refuses those past its cap, answers a kept-alive client throughout, closes the idle ones, then answers everyone`, async () => {
    const { fileDescriptorLimit, maxConnections } = listening(server);
    expect(fileDescriptorLimit).toBe(LIMIT);
    expect(maxConnections).toBeLessThan(LIMIT);

    // A kiosk connected before the flood, polling on its kept-alive connection throughout.
    const kiosk = open(server.url);
    let polling = true;
    const polls = (async () => {
      let sent = 0;
      while (polling && !kiosk.closed) {
        kiosk.socket.write(REQUEST);
        sent++;
        await until(() => kiosk.closed || answered(kiosk) >= sent);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    await until(() => kiosk.received.includes("HTTP/1.1 200"));

    // 25 at a time, each batch accepted before the next: a flood the server keeps up with. One that
    // arrives all at once can outrun the cap; the burst test below covers that.
    for (let i = 0; i < FLOOD; i += 25) {
      const batch = Array.from({ length: Math.min(25, FLOOD - i) }, () => open(server.url));
      sockets.push(...batch);
      await until(() => batch.every((watched) => watched.connected || watched.closed));
    }
    await until(() => sockets.filter((watched) => watched.closed).length >= FLOOD - maxConnections);
    const answeredOnceFull = answered(kiosk);
    // The held ones sent nothing: each is answered 408 and closed once its headers are late. Until
    // the first of them is, the server is full, and the kiosk must still have been answered.
    await until(() => sockets.some((watched) => watched.received.startsWith("HTTP/1.1 408")));
    const answeredWhileFull = answered(kiosk);
    await until(() => sockets.every((watched) => watched.closed));
    polling = false;
    await polls;
    const refused = sockets.filter((watched) => watched.received === "").length;
    const timedOut = sockets.filter((watched) => watched.received.startsWith("HTTP/1.1 408")).length;

    const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(`${server.url}/api/v2/frequencies`).then((r) => r.status)));
    console.log(
      `connection flood: ulimit -n ${fileDescriptorLimit}, cap ${maxConnections}, ${FLOOD} idle connections opened, ` +
        `${refused} closed unanswered (past the cap), ${timedOut} held until answered 408; ` +
        `a kept-alive client answered ${answeredWhileFull - answeredOnceFull} times while the server was full, ${answered(kiosk)} in all; ` +
        `after: ${answers.filter((s) => s === 200).length}/20 answered 200; process alive: ${alive(server.pid)}`,
    );

    expect(refused).toBeGreaterThanOrEqual(FLOOD - maxConnections);
    expect(timedOut).toBeGreaterThan(0);
    expect(refused + timedOut).toBe(FLOOD);
    expect(kiosk.closed).toBe(false);
    expect(answeredWhileFull).toBeGreaterThan(answeredOnceFull);
    expect(answers).toEqual(Array(20).fill(200));
    expect(alive(server.pid)).toBe(true);
    expect(server.logs()).not.toMatch(/Too many open files|os error 24/);
    kiosk.socket.destroy();
  }, 60_000);

  it("closes a connection that trickles its headers (slowloris) with 408, and one that sends nothing", async () => {
    const trickler = open(server.url);
    const silent = open(server.url);
    await until(() => trickler.connected && silent.connected);
    trickler.socket.write("GET /api/v2/frequencies HTTP/1.1\r\nHost: cadence.test\r\n");
    let lines = 0;
    // A header line every half second, never the blank line that ends them.
    while (!trickler.closed) {
      trickler.socket.write(`X-Trickle-${lines++}: x\r\n`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await until(() => silent.closed);
    expect(lines).toBeGreaterThan(1);
    expect(trickler.received).toMatch(/^HTTP\/1\.1 408/);
    expect(silent.received).toMatch(/^HTTP\/1\.1 408/);
    expect(alive(server.pid)).toBe(true);
  }, 60_000);

  it("recovers from a burst of 1,500 connections opened at once (wrk -c1500), which outruns the cap", async () => {
    const burst = Array.from({ length: 1_500 }, () => open(server.url));
    sockets.push(...burst);
    await until(() => burst.every((watched) => watched.connected || watched.closed));
    for (const watched of burst) watched.socket.destroy();
    // Answered again once the burst is gone: at once, or after the listener is reopened.
    let attempts = 0;
    for (;;) {
      attempts++;
      const status = await fetch(`${server.url}/api/v2/frequencies`, { signal: AbortSignal.timeout(1_000) }).then((r) => r.status, () => 0);
      if (status === 200) break;
    }
    const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(`${server.url}/api/v2/frequencies`).then((r) => r.status)));
    const reopened = server.logs().split("\n").filter((line) => line.includes('"event":"listener_reopened"')).length;
    console.log(`burst of 1,500: answered again after ${attempts} attempt(s), listener reopened ${reopened} time(s) so far, then ${answers.filter((s) => s === 200).length}/20 answered 200; process alive: ${alive(server.pid)}`);
    expect(answers).toEqual(Array(20).fill(200));
    expect(alive(server.pid)).toBe(true);
  }, 60_000);
});

describe("npm start's descriptor limit", () => {
  const database = scopedDatabase();
  let server: RunningServer;
  // Whatever this machine allows, at most 4096: the start script must raise its soft limit to it.
  const hard = Math.min(4096, Number(execFileSync("sh", ["-c", "ulimit -Hn"], { encoding: "utf8" }).trim()) || 4096);

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: database.url }, undefined, { startScript: true, ulimit: { soft: 128, hard } });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("raises the soft limit to the hard one and logs the figure it got and the cap it follows from", () => {
    const { fileDescriptorLimit, maxConnections } = listening(server);
    expect(fileDescriptorLimit).toBe(hard);
    expect(maxConnections).toBeGreaterThan(0);
    expect(maxConnections).toBeLessThan(hard);
  });
});
