import type { QueryOptions } from "../db/database.ts";

/**
 * The most reads one statement (or one rate-limit script call) answers; more waiting go in the
 * next. Keeps a statement's arrays small.
 */
export const MAX_BATCH = 256;

/**
 * The most writes one statement carries (system names, validations that set one). A write costs
 * Postgres more than a read (row locks, the name check, the update), so a batch is kept shorter:
 * each statement stays far inside the deadline, and 64 a statement still carry a fleet's boot.
 */
export const MAX_WRITE_BATCH = 64;

/**
 * Runs reads (or writes) through `run` one statement at a time, at most `max` a statement: a read
 * asked for while no statement is running is sent at once, alone; reads asked for while one runs wait for it and then go together
 * in the next. Under light load nothing waits; under heavy load (a fleet polling at once) one
 * statement answers many reads, so the driver and Postgres do the per-statement work (bind,
 * execute, protocol round trip, result) once a batch instead of once a read. Every read is
 * answered by a statement that started after it was asked for, never from an earlier one.
 *
 * Why one at a time: measured here on the license schedule 304 (wrk, 50 connections, 2 cores), one
 * statement at a time answered 25-30k polls/s, two at a time 21k, three 18k, and one statement a
 * poll 12k, against 17k for a bare Deno.serve running `select 1` a request: fewer statements in
 * flight make bigger batches.
 *
 * With `identity`, reads of one batch with the same identity are one input of its statement and
 * share its result: polls of one key in flight together (a kiosk's retry, a copied key, a client
 * polling in a loop) cost Postgres one row, not one each.
 *
 * `run` answers a batch with one result for each input, in order, and gets the `QueryOptions`
 * that make the statement's deadline count from when the batch's oldest read was asked for: a
 * read waiting behind a stuck statement is not held past its own bound. When `run` fails, every
 * read of the batch fails with its error.
 *
 * @example
 * const read = batchWhileBusy((keys: string[], options) => readMany(db, keys, options));
 * const row = await read("DEMO-0000-0000-0001");
 */
export function batchWhileBusy<In, Out>(
  run: (inputs: In[], options: QueryOptions) => Promise<Out[]>,
  max = MAX_BATCH,
  identity?: (input: In) => string,
): (input: In) => Promise<Out> {
  let waiting: Array<{ input: In; askedAt: number; resolve: (output: Out) => void; reject: (error: unknown) => void }> = [];
  let running = false;

  async function send() {
    running = true;
    // The statement's inputs, each distinct one once, and for each waiting read taken its input's position.
    const inputs: In[] = [];
    const positions: number[] = [];
    const seen = new Map<string, number>();
    let taken = 0;
    for (; taken < waiting.length; taken++) {
      const { input } = waiting[taken];
      const id = identity?.(input);
      let at = id === undefined ? undefined : seen.get(id);
      if (at === undefined) {
        if (inputs.length === max) break;
        at = inputs.push(input) - 1;
        if (id !== undefined) seen.set(id, at);
      }
      positions.push(at);
    }
    const batch = waiting.slice(0, taken);
    waiting = waiting.slice(taken);
    try {
      const outputs = await run(inputs, { askedAt: batch[0].askedAt });
      batch.forEach((read, at) => read.resolve(outputs[positions[at]]));
    } catch (error) {
      batch.forEach((read) => read.reject(error));
    }
    running = false;
    if (waiting.length > 0) send();
  }

  return (input) =>
    new Promise<Out>((resolve, reject) => {
      waiting.push({ input, askedAt: performance.now(), resolve, reject });
      if (!running) send();
    });
}

/**
 * The rows of a batch statement in the order of its reads: each row carries `n`, its read's
 * 1-based position (`unnest(...) with ordinality as r(..., n)`); a read with no row gets null.
 */
export function rowsByRead<Row>(count: number, rows: ReadonlyArray<Row & { n: string | number }>): Array<Row | null> {
  const answers: Array<Row | null> = new Array(count).fill(null);
  for (const { n, ...row } of rows) answers[Number(n) - 1] = row as Row;
  return answers;
}
