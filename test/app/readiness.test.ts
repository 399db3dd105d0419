import { describe, expect, it, vi } from "vitest";
import { CHECKED_WITHIN_MS, workerReadiness } from "../../functions/app/admin/readiness.ts";

describe("a worker's readiness (functions/app/admin/readiness.ts)", () => {
  it("is starting until every condition is met, naming those it waits for, then ready", () => {
    const readiness = workerReadiness(["migrations", "listening", "venues"]);
    readiness.met("listening");
    expect(readiness.state()).toEqual({ status: "starting", waitingFor: ["migrations", "venues"] });
    readiness.met("migrations");
    readiness.met("venues");
    expect(readiness.state()).toEqual({ status: "ready", waitingFor: [] });
  });

  it("drains from drain() on, whatever else holds", () => {
    const readiness = workerReadiness(["venues"]);
    readiness.drain();
    expect(readiness.state()).toEqual({ status: "draining", waitingFor: [] });
  });

  it("lets go at once when nothing has checked it lately: nothing sends it requests", async () => {
    let now = 0;
    const readiness = workerReadiness([], () => now);
    readiness.answerCheck();
    now = CHECKED_WITHIN_MS + 1;
    readiness.drain();
    await readiness.letGo();
  });

  it("lets go at once after a single look (an operator's, not a proxy's)", async () => {
    const readiness = workerReadiness([]);
    readiness.answerCheck();
    readiness.drain();
    await readiness.letGo();
  });

  it("lets go once a check has read it draining, when a proxy checks it", async () => {
    const readiness = workerReadiness([]);
    readiness.answerCheck();
    readiness.answerCheck();
    readiness.drain();
    let letGo = false;
    const waiting = readiness.letGo().then(() => (letGo = true));
    await Promise.resolve();
    expect(letGo).toBe(false);
    expect(readiness.answerCheck().status).toBe("draining");
    await waiting;
  });

  it("lets go after CHECKED_WITHIN_MS at most, should the proxy stop checking it", async () => {
    vi.useFakeTimers();
    try {
      const readiness = workerReadiness([]);
      readiness.answerCheck();
      readiness.answerCheck();
      readiness.drain();
      const waiting = readiness.letGo();
      await vi.advanceTimersByTimeAsync(CHECKED_WITHIN_MS);
      await waiting;
    } finally {
      vi.useRealTimers();
    }
  });

  it("tells once a check has found it ready, or that none came within CHECKED_WITHIN_MS", async () => {
    const checked = workerReadiness([]);
    checked.answerCheck();
    expect(await checked.checkedReady).toBe(true);
    vi.useFakeTimers();
    try {
      const unchecked = workerReadiness([]);
      const told = unchecked.checkedReady;
      await vi.advanceTimersByTimeAsync(CHECKED_WITHIN_MS);
      expect(await told).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });
});
