import type { QueryOptions } from "../db/database.ts";
import { batchWhileBusy, MAX_BATCH } from "./batch-while-busy.ts";
import { type Known, lastKnownGood, type LastKnownGoodOptions } from "./last-known-good.ts";

export interface KioskReadOptions<Ask, Row, Answer> {
  /** One statement for a batch of asks: one row (or null) per ask, in their order. */
  batch: (asks: Ask[], options: QueryOptions) => Promise<Row[]>;
  /** What makes two asks the same: asks of one batch with the same identity are asked once (`batchWhileBusy`). */
  identity: (ask: Ask) => string;
  /** How many last known good answers are kept, and which answers are worth keeping (the clock is the read path's). */
  lastKnownGood: Omit<LastKnownGoodOptions<Answer>, "now"> & { keep: (answer: Answer) => boolean };
}

/** A kiosk read: `memo` names the answer kept for it; `answer` turns the batched read of its asks into that answer. */
export type KioskRead<Ask, Row, Answer> = (memo: string, answer: (read: (ask: Ask) => Promise<Row>) => Promise<Answer>) => Promise<Known<Answer>>;

/**
 * What every kiosk read by key shares, wired one way (features reach it through `readPath`): asks
 * made while a statement runs go together in the next one (`batchWhileBusy`), and while the
 * database is unavailable a read is answered with the last good answer it had for the same memo,
 * with its age (`lastKnownGood`, bounded). Each read turns its asks into its answer itself
 * (`answer`), so a feature adds what is its own (the schedule read its served versions) between
 * the two.
 *
 * @example
 * const entitlements = kioskRead({ batch: (asks, options) => readEntitlements(db, asks, options), identity: ({ key, email }) => `${key}\n${email}`, lastKnownGood: { ...bound, keep } }, Date.now);
 * const { value, age } = await entitlements(`${key}\n${email}`, (read) => read({ key, email }));
 */
export function kioskRead<Ask, Row, Answer = Row>(options: KioskReadOptions<Ask, Row, Answer>, now: () => number): KioskRead<Ask, Row, Answer> {
  const read = batchWhileBusy(options.batch, MAX_BATCH, options.identity);
  const lastGood = lastKnownGood<Answer>({ ...options.lastKnownGood, now });
  return function kioskReadOf(memo, answer) {
    return lastGood.read(memo, () => answer(read), options.lastKnownGood.keep);
  };
}
