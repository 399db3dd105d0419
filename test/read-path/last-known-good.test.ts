import { describe, expect, it } from "vitest";
import { DatabaseUnavailable } from "../../functions/app/db/unavailable.ts";
import { ageHeader } from "../../functions/app/http/age-header.ts";
import { lastKnownGood, oldest } from "../../functions/app/read-path/last-known-good.ts";
import { ttlCache } from "../../functions/app/read-path/ttl-cache.ts";
import { testClock } from "../support/clock.ts";

const down = () => Promise.reject(new DatabaseUnavailable("connect ECONNREFUSED"));

function cache(clock = testClock(), options: { capacity?: number; maxBytes?: number; maxAgeMs?: number } = {}) {
  return lastKnownGood<string>({
    capacity: options.capacity ?? 10,
    maxBytes: options.maxBytes ?? 1 << 20,
    sizeOf: (value) => value.length,
    maxAgeMs: options.maxAgeMs,
    now: clock.now,
  });
}

describe("the last known good answer (stale-if-error, RFC 5861)", () => {
  it("answers what was read, with no age, and keeps it", async () => {
    const known = cache();
    expect(await known.read("k", () => Promise.resolve("v1"))).toEqual({ value: "v1", age: null });
  });

  it("answers the last good value with its age in whole seconds while the database is unavailable", async () => {
    const clock = testClock();
    const known = cache(clock);
    await known.read("k", () => Promise.resolve("v1"));
    clock.advance(61_900);
    expect(await known.read("k", down)).toEqual({ value: "v1", age: 61 });
  });

  it("lets the error stand for a key never read, and for any error that is not the database being unavailable", async () => {
    const known = cache();
    await expect(known.read("never", down)).rejects.toBeInstanceOf(DatabaseUnavailable);
    await known.read("k", () => Promise.resolve("v1"));
    await expect(known.read("k", () => Promise.reject(new Error("bug")))).rejects.toThrow("bug");
  });

  it("forgets a key whose last answer it was told not to keep: the last answer, not an older one", async () => {
    const known = cache();
    await known.read("k", () => Promise.resolve("valid"));
    await known.read("k", () => Promise.resolve("inactive"), (value) => value === "valid");
    await expect(known.read("k", down)).rejects.toBeInstanceOf(DatabaseUnavailable);
  });

  it("serves nothing older than maxAgeMs", async () => {
    const clock = testClock();
    const known = cache(clock, { maxAgeMs: 24 * 3600_000 });
    await known.read("k", () => Promise.resolve("v1"));
    clock.advance(24 * 3600_000);
    expect((await known.read("k", down)).value).toBe("v1");
    clock.advance(1);
    await expect(known.read("k", down)).rejects.toBeInstanceOf(DatabaseUnavailable);
  });

  it("keeps at most `capacity` keys, dropping the least recently read", async () => {
    const known = cache(testClock(), { capacity: 2 });
    for (const key of ["a", "b"]) await known.read(key, () => Promise.resolve(key));
    await known.read("a", () => Promise.resolve("a"));
    await known.read("c", () => Promise.resolve("c"));
    expect((await known.read("a", down)).value).toBe("a");
    expect((await known.read("c", down)).value).toBe("c");
    await expect(known.read("b", down)).rejects.toBeInstanceOf(DatabaseUnavailable);
  });

  it("keeps at most `maxBytes`, counting each entry's value and a fixed overhead", async () => {
    const known = cache(testClock(), { maxBytes: 2 * (200 + 1000) });
    for (const key of ["a", "b", "c"]) await known.read(key, () => Promise.resolve(key.repeat(1000)));
    await expect(known.read("a", down)).rejects.toBeInstanceOf(DatabaseUnavailable);
    expect((await known.read("c", down)).value).toHaveLength(1000);
  });

  it("names the older age of an answer made of two, and sets Age only on a last known good answer", () => {
    expect(oldest(null, null)).toBeNull();
    expect(oldest(3, null)).toBe(3);
    expect(oldest(3, 7)).toBe(7);
    expect(ageHeader(null)).toEqual({});
    expect(ageHeader(0)).toEqual({ age: "0" });
  });
});

describe("the catalogue's cache (read-path/ttl-cache.ts)", () => {
  it("serves a value for its period, reloads after it, and serves the last value however old while the database is unavailable", async () => {
    const clock = testClock();
    let loads = 0;
    let failing = false;
    const cached = ttlCache(() => (++loads, failing ? down() : Promise.resolve(`v${loads}`)), 5_000, clock.now);
    expect(await cached()).toEqual({ value: "v1", age: null });
    clock.advance(4_999);
    expect(await cached()).toEqual({ value: "v1", age: null });
    clock.advance(1);
    expect(await cached()).toEqual({ value: "v2", age: null });
    failing = true;
    clock.advance(3 * 3600_000);
    expect(await cached()).toEqual({ value: "v2", age: 3 * 3600 });
    expect(loads).toBe(3);
    failing = false;
    expect(await cached()).toEqual({ value: "v4", age: null });
  });
});
