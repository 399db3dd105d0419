import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { admission, type AdmissionOptions, LOOP_TICK_MS, type ShedReason } from "../../functions/app/http/admission.ts";

/** An app whose every request stays under way until the test ends it, in the order asked. */
function heldApp() {
  const held: Array<{ url: string; end: () => void }> = [];
  const fetch = (request: Request) =>
    new Promise<Response>((resolve) => held.push({ url: request.url, end: () => resolve(new Response("ok")) }));
  return { fetch, held };
}

const OPTIONS: Omit<AdmissionOptions, "onShed"> = {
  limit: 2,
  queueMs: 100,
  maxWaiting: 2,
  retryAfterSeconds: { min: 2, max: 10 },
  random: () => 0.5,
};

/** Admission around a held app, with what it refused, by reason. */
function admitted(options: Partial<AdmissionOptions> = {}) {
  const app = heldApp();
  const shed: ShedReason[] = [];
  const gate = admission(app.fetch, { ...OPTIONS, onShed: (reason) => shed.push(reason), ...options });
  const ask = (path: string, init?: RequestInit) => gate.fetch(new Request(`http://api${path}`, init), {});
  return { ...app, gate, shed, ask };
}

/** Lets every promise settled so far run its reactions (no timer moves). */
const settle = () => vi.advanceTimersByTimeAsync(0);

describe("admission control (http/admission.ts)", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("hands up to `limit` requests to the app at once", async () => {
    const { ask, held, gate } = admitted();
    void ask("/1");
    void ask("/2");
    void ask("/3");
    await settle();
    expect(held.map((h) => h.url)).toEqual(["http://api/1", "http://api/2"]);
    expect(gate.use()).toEqual({ limit: 2, inFlight: 2, waiting: 1 });
  });

  it("gives a request's turn, once it ends, to the first still waiting", async () => {
    const { ask, held, gate } = admitted();
    const first = ask("/1");
    void ask("/2");
    void ask("/3");
    void ask("/4");
    await settle();
    held[0].end();
    expect((await first).status).toBe(200);
    await settle();
    expect(held.map((h) => h.url)).toEqual(["http://api/1", "http://api/2", "http://api/3"]);
    expect(gate.use()).toEqual({ limit: 2, inFlight: 2, waiting: 1 });
  });

  it("answers a request that waited `queueMs` for its turn 503, with Retry-After and the JSON message, and never hands it to the app", async () => {
    const { ask, held, shed } = admitted();
    void ask("/1");
    void ask("/2");
    const waited = ask("/3");
    await vi.advanceTimersByTimeAsync(OPTIONS.queueMs);
    const answer = await waited;
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe("6");
    expect(answer.headers.get("content-type")).toBe("application/json");
    expect(await answer.json()).toEqual({ message: "service temporarily unavailable" });
    expect(shed).toEqual(["waited"]);
    // Its turn was never given: the next turn freed goes to no one, and the count of turns holds.
    held[0].end();
    await settle();
    expect(held).toHaveLength(2);
  });

  it("answers 503 at once when `maxWaiting` already wait", async () => {
    const { ask, shed, gate } = admitted();
    for (const path of ["/1", "/2", "/3", "/4"]) void ask(path);
    const refused = await ask("/5");
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(shed).toEqual(["full"]);
    expect(gate.use()).toEqual({ limit: 2, inFlight: 2, waiting: 2 });
  });

  it("reads no body of a request it refuses", async () => {
    const { gate } = admitted({ limit: 0, maxWaiting: 0 });
    const request = new Request("http://api/license", { method: "POST", body: "{}" });
    const refused = await gate.fetch(request, {});
    expect(refused.status).toBe(503);
    expect(request.bodyUsed).toBe(false);
  });

  it("draws Retry-After anew for each refusal, from `min` to `max` seconds, both included", async () => {
    const draws = [0, 0.999, 0.5];
    const { ask } = admitted({ limit: 0, maxWaiting: 0, random: () => draws.shift()! });
    const answers = [await ask("/1"), await ask("/2"), await ask("/3")];
    expect(answers.map((answer) => answer.headers.get("retry-after"))).toEqual(["2", "10", "6"]);
  });

  it("answers 503 at once each request the event loop hands over `loopBehindMs` late turn after turn, and admits again once the loop has caught up", async () => {
    let clock = 0;
    const { ask, held, shed } = admitted({ loopBehindMs: 500, now: () => clock });
    clock = LOOP_TICK_MS + 600;
    await vi.advanceTimersByTimeAsync(LOOP_TICK_MS);
    // The tick came 600 ms late, and the loop is as late again: what it hands over now has waited in it.
    clock += LOOP_TICK_MS + 600;
    const late = await ask("/1");
    expect(late.status).toBe(503);
    expect(late.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(shed).toEqual(["behind"]);
    await vi.advanceTimersByTimeAsync(LOOP_TICK_MS);
    clock += LOOP_TICK_MS;
    await vi.advanceTimersByTimeAsync(LOOP_TICK_MS);
    void ask("/2");
    await settle();
    expect(held.map((h) => h.url)).toEqual(["http://api/2"]);
  });

  it("serves what the event loop held through one pause `loopBehindMs` long, when its ticks came on time before it", async () => {
    let clock = 0;
    const { ask, held, shed } = admitted({ loopBehindMs: 500, now: () => clock });
    clock = LOOP_TICK_MS + 600;
    void ask("/1");
    await settle();
    expect(held.map((h) => h.url)).toEqual(["http://api/1"]);
    expect(shed).toEqual([]);
  });

  it("gives the turn back when the app throws", async () => {
    const gate = admission(() => Promise.reject(new Error("boom")), { ...OPTIONS, limit: 1 });
    await expect(gate.fetch(new Request("http://api/1"), {})).rejects.toThrow("boom");
    expect(gate.use()).toEqual({ limit: 1, inFlight: 0, waiting: 0 });
  });
});
