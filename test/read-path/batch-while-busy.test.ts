import { describe, expect, it } from "vitest";
import { batchWhileBusy, MAX_BATCH, MAX_WRITE_BATCH, rowsByRead } from "../../functions/app/read-path/batch-while-busy.ts";
import type { QueryOptions } from "../../functions/app/db/database.ts";

/** A `run` whose statements the test finishes by hand, recording each batch it was given. */
function manualStatements() {
  const batches: number[][] = [];
  const options: QueryOptions[] = [];
  const pending: Array<{ finish: () => void; fail: (error: Error) => void }> = [];
  const run = (inputs: number[], given: QueryOptions) =>
    new Promise<string[]>((resolve, reject) => {
      batches.push(inputs);
      options.push(given);
      pending.push({ finish: () => resolve(inputs.map((input) => `answer ${input}`)), fail: reject });
    });
  return { run, batches, options, next: () => pending.shift()! };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("reads batched while a statement runs", () => {
  it("sends a read at once, alone, when no statement is running", async () => {
    const statements = manualStatements();
    const read = batchWhileBusy(statements.run);
    const answer = read(1);
    expect(statements.batches).toEqual([[1]]);
    statements.next().finish();
    expect(await answer).toBe("answer 1");
  });

  it("gathers the reads asked for while a statement runs into the next one, each answered with its own result", async () => {
    const statements = manualStatements();
    const read = batchWhileBusy(statements.run);
    const first = read(1);
    const waiting = [read(2), read(3), read(4)];
    expect(statements.batches).toEqual([[1]]);
    statements.next().finish();
    await first;
    await settle();
    expect(statements.batches).toEqual([[1], [2, 3, 4]]);
    statements.next().finish();
    expect(await Promise.all(waiting)).toEqual(["answer 2", "answer 3", "answer 4"]);
  });

  it("never answers a read from a statement that started before it was asked for", async () => {
    const statements = manualStatements();
    const read = batchWhileBusy(statements.run);
    const early = read(1);
    const late = read(2);
    statements.next().finish();
    expect(await early).toBe("answer 1");
    await settle();
    expect(statements.batches.at(-1)).toEqual([2]);
    statements.next().finish();
    expect(await late).toBe("answer 2");
  });

  it("fails every read of a failed statement with its error, and runs the reads after it", async () => {
    const statements = manualStatements();
    const read = batchWhileBusy(statements.run);
    const first = read(1);
    const failing = [read(2), read(3)];
    statements.next().finish();
    await first;
    await settle();
    const later = read(4);
    statements.next().fail(new Error("connection lost"));
    for (const outcome of await Promise.allSettled(failing)) {
      expect(outcome).toMatchObject({ status: "rejected", reason: { message: "connection lost" } });
    }
    await settle();
    statements.next().finish();
    expect(await later).toBe("answer 4");
  });

  it("counts a batch statement's deadline from when its oldest read was asked for, so waiting behind a stuck statement is not extra", async () => {
    const statements = manualStatements();
    const read = batchWhileBusy(statements.run);
    const first = read(1);
    const before = performance.now();
    const waiting = [read(2), read(3)];
    const after = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 30));
    statements.next().finish();
    await first;
    await settle();
    expect(statements.options[1].askedAt).toBeGreaterThanOrEqual(before);
    expect(statements.options[1].askedAt).toBeLessThanOrEqual(after);
    statements.next().finish();
    await Promise.all(waiting);
  });

  it(`sends at most ${MAX_BATCH} reads in one statement`, async () => {
    const statements = manualStatements();
    const read = batchWhileBusy(statements.run);
    const reads = Array.from({ length: MAX_BATCH + 11 }, (_, at) => read(at));
    for (let statement = 0; statement < 3; statement++) {
      statements.next().finish();
      await settle();
    }
    expect(statements.batches.map((batch) => batch.length)).toEqual([1, MAX_BATCH, 10]);
    expect(await Promise.all(reads)).toEqual(reads.map((_, at) => `answer ${at}`));
  });

  it(`sends at most ${MAX_WRITE_BATCH} writes in one statement when given that bound, as the write routes are`, async () => {
    const statements = manualStatements();
    const write = batchWhileBusy(statements.run, MAX_WRITE_BATCH);
    const writes = Array.from({ length: MAX_WRITE_BATCH + 6 }, (_, at) => write(at));
    for (let statement = 0; statement < 3; statement++) {
      statements.next().finish();
      await settle();
    }
    expect(statements.batches.map((batch) => batch.length)).toEqual([1, MAX_WRITE_BATCH, 5]);
    expect(await Promise.all(writes)).toEqual(writes.map((_, at) => `answer ${at}`));
  });

  it("asks reads of one batch with the same identity once, each answered with that result", async () => {
    const statements = manualStatements();
    const read = batchWhileBusy(statements.run, MAX_BATCH, (input) => String(input % 10));
    const first = read(1);
    const waiting = [read(2), read(12), read(3), read(22), read(2)];
    statements.next().finish();
    await first;
    await settle();
    expect(statements.batches).toEqual([[1], [2, 3]]);
    statements.next().finish();
    expect(await Promise.all(waiting)).toEqual(["answer 2", "answer 2", "answer 3", "answer 2", "answer 2"]);
  });

  it(`counts distinct reads against the ${MAX_BATCH} of a statement: repeats ride along`, async () => {
    const statements = manualStatements();
    const read = batchWhileBusy(statements.run, 2, (input) => String(input % 10));
    const first = read(0);
    const waiting = [read(1), read(11), read(2), read(21), read(3)];
    statements.next().finish();
    await first;
    await settle();
    statements.next().finish();
    await settle();
    expect(statements.batches).toEqual([[0], [1, 2], [3]]);
    statements.next().finish();
    expect(await Promise.all(waiting)).toEqual(["answer 1", "answer 1", "answer 2", "answer 1", "answer 3"]);
  });

  it("puts a batch statement's rows in the order of its reads, null for a read with no row", () => {
    expect(rowsByRead(4, [{ n: "3", key: "c" }, { n: "1", key: "a" }, { n: 2, key: "b" }])).toEqual([
      { key: "a" },
      { key: "b" },
      { key: "c" },
      null,
    ]);
  });
});
