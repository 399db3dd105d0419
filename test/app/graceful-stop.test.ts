import { connect } from "node:net";
import postgres from "postgres";
import { describe, expect, it, vi } from "vitest";
import { gracefulStop } from "../../functions/app/admin/graceful-stop.ts";
import { workerReadiness } from "../../functions/app/admin/readiness.ts";
import { scopedDatabase } from "../support/database.ts";
import { startServer } from "../support/server.ts";

const KEY = "DEMO-0000-0000-0001";
const EMAIL = "demo@example.com";

/**
 * A POST /api/v2/license whose head and first half of body are sent now, the rest by `finish()`.
 * `sent` resolves once the server has the request under way: its handler reading the body, which
 * the server's `100 Continue` (asked for by `Expect`) says; until then a stop may find no request.
 * `answer` is the final answer, the interim 100 left out.
 */
function halfSentValidation(url: string) {
  const body = JSON.stringify({ license_key: KEY, email_address: EMAIL });
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let received = "";
  socket.setEncoding("utf8");
  const continued = new Promise<void>((resolve) =>
    socket.on("data", (chunk: string) => {
      received += chunk;
      if (received.startsWith("HTTP/1.1 100 ") && received.includes("\r\n\r\n")) resolve();
    }));
  const closed = new Promise<string>((resolve) => socket.on("close", () => resolve(received.replace(/^HTTP\/1\.1 100 [^]*?\r\n\r\n/, ""))));
  const sent = new Promise<void>((resolve) => socket.once("connect", resolve)).then(async () => {
    socket.write(
      `POST /api/v2/license HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
    );
    await continued;
    socket.write(body.slice(0, 20));
  });
  // The rest written, not ended: hyper drops a body whose end comes with the client's FIN after a 100.
  return { sent, finish: () => socket.write(body.slice(20)), answer: closed };
}

/** Whether a new connection to `url`'s port is refused. */
function refused(url: string) {
  const { hostname, port } = new URL(url);
  return new Promise<boolean>((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });
}

describe("SIGTERM to a worker (functions/app/admin/graceful-stop.ts, through the real entry)", () => {
  const database = scopedDatabase();

  it("finishes the request under way (its body still arriving), stops accepting, writes the sightings it holds, and exits within its bound", async () => {
    // Sightings written only at the stop: a minute between writes, far past this test.
    const server = await startServer({ ...database.serverEnv, ADMIN_PORT: "0", SIGHTINGS_FLUSH_MS: "60000" });
    const read = await fetch(`${server.url}/api/v2/licenses/${KEY}/schedule`);
    expect(read.status).toBe(200);
    const underWay = halfSentValidation(server.url);
    await underWay.sent;
    const signalled = performance.now();
    process.kill(server.pid, "SIGTERM");
    // Nothing checks this worker: it is stopping at once, and waits for the body still arriving.
    await vi.waitFor(() => expect(server.logs()).toContain('"event":"stopping","reason":"SIGTERM"'), { timeout: 120_000, interval: 20 });
    underWay.finish();
    const answer = await underWay.answer;
    await server.stop();
    const stoppedMs = performance.now() - signalled;
    console.log(`stopped ${Math.round(stoppedMs)} ms after SIGTERM, answering the request under way: ${answer.split("\r\n")[0]}`);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toContain(`"key":"${KEY}"`);
    expect(server.logs()).toMatch(/"event":"stopped","reason":"SIGTERM","ms":\d+/);
    // Within its bound: the stop's own timer (STOP_WITHIN_MS) never fired; a machine's speed is not the rule.
    expect(server.logs()).not.toContain('"event":"stop_overran"');
    expect(await refused(server.url)).toBe(true);
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql`select count(*)::int as n from public.kiosk_sightings where license_key = ${KEY}`;
      expect(row.n).toBe(1);
    } finally {
      await sql.end();
    }
  });
});

describe("a stop's steps, in the order that drops no request", () => {
  const steps = () => {
    const done: string[] = [];
    const step = (name: string) => () => {
      done.push(name);
      return Promise.resolve();
    };
    return { done, stopServing: step("stop serving"), closeRuntime: step("write sightings, close pools"), closeAdmin: step("close admin"), log: () => {}, exit: (code: number) => done.push(`exit ${code}`) };
  };

  it("drains readiness first, then stops serving, closes the runtime, the admin listener last, and exits 0", async () => {
    const readiness = workerReadiness([]);
    const run = steps();
    await gracefulStop({ ...run, readiness })("SIGTERM");
    expect(readiness.state().status).toBe("draining");
    expect(run.done).toEqual(["stop serving", "write sightings, close pools", "close admin", "exit 0"]);
  });

  it("runs once, however many signals come", async () => {
    const run = steps();
    const stop = gracefulStop(run);
    await Promise.all([stop("SIGTERM"), stop("SIGINT"), stop("supervisor gone")]);
    expect(run.done.filter((step) => step === "exit 0")).toHaveLength(1);
  });

  it("exits 1, naming the step, when a step outlasts its bound", async () => {
    const logged: unknown[] = [];
    const exits: number[] = [];
    void gracefulStop({
      stopServing: () => new Promise(() => {}),
      closeRuntime: () => Promise.resolve(),
      log: (...line) => logged.push(line),
      exit: (code) => exits.push(code),
      withinMs: 50,
    })("SIGTERM");
    await vi.waitFor(() => expect(exits).toEqual([1]));
    expect(logged).toContainEqual(["error", "stop_overran", { withinMs: 50, step: "finishing the requests under way" }]);
  });
});
