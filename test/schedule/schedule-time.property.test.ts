import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { readSchedulePayload } from "../support/schedule-reads.ts";
import { scopedDatabase } from "../support/database.ts";

// The time arithmetic of cadence.schedule_payload, checked on the real database against an oracle
// written differently: it walks the clock minute by minute instead of using the formula.

const KEY = "DEMO-0000-0000-0004";
const MINUTES_PER_DAY = 1440;

// Each case writes and reads back up to 1,440 blocks in a statement: fixtures, not a kiosk's request,
// whose 2 s deadline (the pool's default) a busy machine stretches them past. A minute catches a hang.
const database = scopedDatabase({ deadlineMs: 60_000 });
let schedule: string;

beforeAll(async () => {
  const [row] = await database.db.query<{ id: string }>(
    "insert into public.schedules (license_key, type) values ($1, 'daily') returning id",
    [KEY],
  );
  schedule = row.id;
});

interface Pair {
  start: number;
  end: number;
}

const TIME_FIELDS = ["startTime", "startMinutes", "endTime", "endMinutes", "overnight", "durationMinutes"] as const;

const hhmm = (minutes: number) =>
  `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;

/** What the contract says a block from `start` to `end` (minutes from midnight) reads as. */
function expected({ start, end }: Pair) {
  let durationMinutes = 1;
  while ((start + durationMinutes) % MINUTES_PER_DAY !== end % MINUTES_PER_DAY) durationMinutes += 1;
  return {
    startTime: hhmm(start),
    startMinutes: start,
    endTime: hhmm(end),
    endMinutes: end,
    overnight: end <= start,
    durationMinutes,
  };
}

/** Makes the schedule exactly these blocks (one statement), then reads them back as a kiosk does. */
async function served(pairs: Pair[]) {
  const ids = pairs.map(() => crypto.randomUUID());
  await database.db.query("delete from public.schedule_blocks where schedule_id = $1", [schedule]);
  await database.db.query(
    `insert into public.schedule_blocks (id, schedule_id, start_time, end_time)
     select b.id, $1, format('%s:%s', b.s / 60, b.s % 60)::time, format('%s:%s', b.e / 60, b.e % 60)::time
     from unnest($2::uuid[], $3::int[], $4::int[]) as b (id, s, e)`,
    [schedule, ids, pairs.map((pair) => pair.start), pairs.map((pair) => pair.end)],
  );
  const payload = JSON.parse((await readSchedulePayload(database.db, KEY)) ?? "null");
  return { ids, blocks: payload.daily as Array<Record<string, unknown> & { id: string }> };
}

async function check(pairs: Pair[]) {
  const { ids, blocks } = await served(pairs);
  const byId = new Map(blocks.map((block) => [block.id, block]));
  expect(blocks).toHaveLength(pairs.length);
  // One comparison for the whole schedule (up to 1,441 blocks): a mismatch still names its pair.
  const read = pairs.map((pair, index) => {
    const block: Record<string, unknown> = byId.get(ids[index]) ?? {};
    return { pair, times: Object.fromEntries(TIME_FIELDS.map((field) => [field, block[field]])) };
  });
  expect(read).toEqual(pairs.map((pair) => ({ pair, times: expected(pair) })));
  // Start order, then end, then id (uuid order is the order of its lower-case text).
  const order = pairs
    .map((pair, index) => ({ ...pair, id: ids[index] }))
    .sort((a, b) => a.start - b.start || a.end - b.end || (a.id < b.id ? -1 : 1))
    .map((block) => block.id);
  expect(blocks.map((block) => block.id)).toEqual(order);
}

const start = fc.integer({ min: 0, max: MINUTES_PER_DAY - 1 });
const end = fc.integer({ min: 0, max: MINUTES_PER_DAY });

describe("block times (startTime, endTime, minutes, overnight, durationMinutes)", () => {
  it("match the spec for any start 00:00-23:59 and end 00:00-24:00", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ start, end }), { minLength: 1, maxLength: 40 }), check),
      {
        numRuns: 60,
        examples: [
          [[{ start: 22 * 60, end: 6 * 60 }, { start: 20 * 60, end: 20 * 60 }, { start: 0, end: 1440 }]],
          [[{ start: 0, end: 0 }, { start: 1439, end: 1440 }, { start: 1439, end: 0 }, { start: 0, end: 1 }]],
        ],
      },
    );
  });

  it("match the spec for every end of a start", async () => {
    await fc.assert(
      fc.asyncProperty(start, (from) =>
        check(Array.from({ length: MINUTES_PER_DAY + 1 }, (_, to) => ({ start: from, end: to }))),
      ),
      { numRuns: 25, examples: [[0], [1439]] },
    );
  });

  it("match the spec for every start of an end", async () => {
    await fc.assert(
      fc.asyncProperty(end, (to) => check(Array.from({ length: MINUTES_PER_DAY }, (_, from) => ({ start: from, end: to })))),
      { numRuns: 25, examples: [[0], [1440]] },
    );
  });
});
