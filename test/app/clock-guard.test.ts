import { describe, expect, it } from "vitest";
import { testApp } from "../support/app.ts";
import { assertRealClockOnly, TEST_CLOCK_MAX_SKEW_MS, testClock } from "../support/clock.ts";
import { scopedDatabase } from "../support/database.ts";
import { startServer } from "../support/server.ts";

describe("the test clock guard: a fake clock never meets a real-clock process on the same data", () => {
  const database = scopedDatabase();

  it("starts a test clock at the real time, and refuses one more than a day away", () => {
    const before = Date.now();
    const clock = testClock();
    expect(clock.now()).toBeGreaterThanOrEqual(before);
    expect(clock.now()).toBeLessThanOrEqual(Date.now());
    expect(() => testClock(Date.now() - TEST_CLOCK_MAX_SKEW_MS - 60_000)).toThrow(/within a day of the real clock/);
    expect(() => testClock(Date.now() + TEST_CLOCK_MAX_SKEW_MS + 60_000)).toThrow(/within a day of the real clock/);
  });

  it("refuses to start a real-clock server on a database an app on a fake clock has used", async () => {
    assertRealClockOnly(database.url);
    testApp(database.db, { now: testClock().now });
    expect(() => assertRealClockOnly(database.url)).toThrow(/fake clock wrote to this database/);
    await expect(startServer({ DATABASE_URL: database.url })).rejects.toThrow(/give the real-clock process its own/);
  });
});
