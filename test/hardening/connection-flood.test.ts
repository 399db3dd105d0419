import { execFileSync } from "node:child_process";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scopedDatabase } from "../support/database.ts";
import { startServer, type RunningServer } from "../support/server.ts";

/** Low enough that a test can hold more connections than the limit, high enough for the server itself. */
const LIMIT = 256;
const FLOOD = LIMIT + 100;

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

function listening(server: RunningServer): { fileDescriptorLimit: number | string } {
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

/** How often the server has taken its port again after losing its listener. */
const reopenings = (server: RunningServer) => server.logs().split("\n").filter((line) => line.includes('"event":"listener_reopened"')).length;

/**
 * Requests until one is answered 200; how many it took. Each is given up after 10 s, a hang guard
 * for a connection the server never takes: at 1 s, a busy machine's slower answers were given up
 * and asked again, so the loop could spin until the test's timeout. That timeout bounds the loop.
 */
async function answeredAgain(url: string): Promise<number> {
  let attempts = 0;
  for (;;) {
    attempts++;
    const status = await fetch(`${url}/api/v2/frequencies`, { signal: AbortSignal.timeout(10_000) }).then((r) => r.status, () => 0);
    if (status === 200) return attempts;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// Bounding connections (header and idle timeouts, caps) is the reverse proxy's job
// (proxy-floods.test.ts); the bare server need only survive a flood and answer once it ends.
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

  it(`survives ${FLOOD} idle connections under ulimit -n ${LIMIT}, more than it has descriptors for, and answers everyone once they close`, async () => {
    expect(listening(server).fileDescriptorLimit).toBe(LIMIT);
    const before = reopenings(server);
    for (let i = 0; i < FLOOD; i += 25) {
      const batch = Array.from({ length: Math.min(25, FLOOD - i) }, () => open(server.url));
      sockets.push(...batch);
      await until(() => batch.every((watched) => watched.connected || watched.closed));
    }
    // Past its descriptors, the process is still there.
    const aliveDuringFlood = alive(server.pid);
    for (const watched of sockets) watched.socket.destroy();
    const attempts = await answeredAgain(server.url);
    const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(`${server.url}/api/v2/frequencies`).then((r) => r.status)));
    const reopened = reopenings(server) - before;
    console.log(`connection flood: ulimit -n ${LIMIT}, ${FLOOD} idle connections; listener reopened ${reopened} time(s); answered again after ${attempts} attempt(s), then ${answers.filter((s) => s === 200).length}/20 answered 200; process alive: ${alive(server.pid)}`);
    expect(aliveDuringFlood).toBe(true);
    // The flood did run the process out of descriptors: its listener was lost, and taken again.
    expect(reopened).toBeGreaterThan(0);
    expect(answers).toEqual(Array(20).fill(200));
    expect(alive(server.pid)).toBe(true);
  });

  it("survives a burst of 1,500 connections opened at once (wrk -c1500), and answers again once it ends", async () => {
    const before = reopenings(server);
    const burst = Array.from({ length: 1_500 }, () => open(server.url));
    sockets.push(...burst);
    await until(() => burst.every((watched) => watched.connected || watched.closed));
    const aliveDuringBurst = alive(server.pid);
    for (const watched of burst) watched.socket.destroy();
    const attempts = await answeredAgain(server.url);
    const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(`${server.url}/api/v2/frequencies`).then((r) => r.status)));
    const reopened = reopenings(server) - before;
    console.log(`burst of 1,500: answered again after ${attempts} attempt(s), listener reopened ${reopened} time(s), then ${answers.filter((s) => s === 200).length}/20 answered 200; process alive: ${alive(server.pid)}`);
    expect(aliveDuringBurst).toBe(true);
    expect(answers).toEqual(Array(20).fill(200));
    expect(alive(server.pid)).toBe(true);
  });
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

  it("raises the soft limit to the hard one and logs the figure it got", () => {
    expect(listening(server).fileDescriptorLimit).toBe(hard);
  });
});
