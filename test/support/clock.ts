import type { Database } from "../../functions/app/db/database.ts";

/** The farthest a test clock may start from the real one. */
export const TEST_CLOCK_MAX_SKEW_MS = 24 * 60 * 60_000;

/** The start of the real current UTC day, for tests that place a clock at a time of day. */
export function utcDayStart(at = Date.now()): number {
  return at - (at % (24 * 60 * 60_000));
}

/**
 * A clock tests move by hand, starting from the real time unless told otherwise.
 *
 * Guard: it refuses to start more than a day away from the real clock. A calendar date written
 * into a test rots as real time passes, and whatever the fake clock writes (an outbox row due at
 * noon, a nonce) is then met by a real-clock process (a server's sweep, Postgres' `now()`) as
 * long past. Tests that need a time of day take it from `utcDayStart()`.
 */
export function testClock(start = Date.now()) {
  if (Math.abs(start - Date.now()) > TEST_CLOCK_MAX_SKEW_MS) {
    throw new Error(`a test clock must start within a day of the real clock, not at ${new Date(start).toISOString()}`);
  }
  let at = start;
  return {
    now: () => at,
    advance(ms: number) {
      at += ms;
    },
  };
}

/** The name of each test database, by its pool. */
const names = new WeakMap<Database, string>();
/** Test databases (by name) an app on a fake clock has written to. */
const fakeClocked = new Set<string>();

/** A database's name in its URL: the same database directly and through the pooler. */
const nameIn = (url: string) => new URL(url).pathname;

/** Lets the guard below know `db`'s URL. */
export function registerDatabase(db: Database, url: string): void {
  names.set(db, nameIn(url));
}

/** Records that an app on a fake clock uses `db`: no real-clock process may then share it. */
export function markFakeClocked(db: Database): void {
  const name = names.get(db);
  if (name) fakeClocked.add(name);
}

/**
 * Guard: refuses to hand `url` to a process on the real clock (a server, a CLI) when an app on a
 * fake clock has written there. Its rows are timed by that clock (an outbox row due at the fake
 * now), and the real process would meet them at the wrong time: give that process its own database.
 */
export function assertRealClockOnly(url: string): void {
  if (fakeClocked.has(nameIn(url))) {
    throw new Error(`${url}: an app on a fake clock wrote to this database; give the real-clock process its own (freshDatabase())`);
  }
}
