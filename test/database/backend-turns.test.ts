import { describe, expect, it } from "vitest";
import { backendTurns } from "../../functions/app/db/backend-turns.ts";

describe("PGlite's one backend, taken in turns (db/backend-turns.ts)", () => {
  it("is held by one user at a time, and handed on first come, first served", async () => {
    const turns = backendTurns();
    const order: string[] = [];
    const first = await turns.take();
    const second = turns.take().then((release) => (order.push("second"), release));
    const third = turns.take().then((release) => (order.push("third"), release));
    await Promise.resolve();
    expect(order).toEqual([]);
    first();
    (await second)();
    (await third)();
    expect(order).toEqual(["second", "third"]);
  });

  it("tells the holder when someone waits, so a staff transaction can give the backend back", async () => {
    const turns = backendTurns();
    let contended = 0;
    const release = await turns.take({ onContended: () => contended++ });
    expect(contended).toBe(0);
    const waiting = turns.take();
    expect(contended).toBe(1);
    release();
    (await waiting)();
  });

  it("lets a wait that is aborted (a deadline, a Ctrl-C) leave the queue, with the abort's reason", async () => {
    const turns = backendTurns();
    const release = await turns.take();
    const aborted = new AbortController();
    const leaving = turns.take({ signal: aborted.signal });
    const staying = turns.take();
    aborted.abort(new Error("past the deadline"));
    await expect(leaving).rejects.toThrow("past the deadline");
    release();
    (await staying)();
  });

  it("ignores a second release of the same turn, which would hand the backend to two users", async () => {
    const turns = backendTurns();
    const release = await turns.take();
    const next = turns.take();
    const after = turns.take();
    release();
    release();
    const releaseNext = await next;
    let afterGranted = false;
    void after.then(() => (afterGranted = true));
    await Promise.resolve();
    await Promise.resolve();
    expect(afterGranted).toBe(false);
    releaseNext();
    (await after)();
    expect(afterGranted).toBe(true);
  });
});
