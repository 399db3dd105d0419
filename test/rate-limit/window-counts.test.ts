import { describe, expect, it } from "vitest";
import { WindowCounts } from "../../functions/app/rate-limit/window-counts.ts";

const address = (n: number) => `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

describe("the memory limiter's counts of one window", () => {
  it("counts each identifier on its own, IPv4 or not", () => {
    const counts = new WindowCounts();
    expect([counts.increment("203.0.113.7"), counts.increment("203.0.113.7"), counts.increment("203.0.113.8")]).toEqual([1, 2, 1]);
    expect([counts.increment("2001:db8::1"), counts.increment("2001:db8::1"), counts.increment("ada@example.com")]).toEqual([1, 2, 1]);
    expect(counts.increment("203.0.113.7")).toBe(3);
  });

  it("takes a refunded request back, never below zero, keeping every other address's count (a full table's probe chains intact)", () => {
    const counts = new WindowCounts();
    const expected = new Map<number, number>();
    // Enough addresses to grow the table and crowd its probe chains; each counted 1 to 3 times.
    for (let n = 0; n < 5_000; n++) {
      for (let time = 0; time <= n % 3; time++) counts.increment(address(n * 7919));
      expected.set(n * 7919, (n % 3) + 1);
    }
    // Refund every address once, and some of them down to zero and past it.
    for (let n = 0; n < 5_000; n++) {
      const times = n % 5 === 0 ? 4 : 1;
      for (let time = 0; time < times; time++) counts.decrement(address(n * 7919));
      expected.set(n * 7919, Math.max(0, expected.get(n * 7919)! - times));
    }
    for (const [n, count] of expected) expect(counts.count(address(n))).toBe(count);
    counts.increment("ada@example.com");
    counts.decrement("ada@example.com");
    counts.decrement("ada@example.com");
    expect(counts.count("ada@example.com")).toBe(0);
    expect(counts.increment("ada@example.com")).toBe(1);
  });

  it("reads a count without counting, 0 for an identifier not seen, IPv4 or not", () => {
    const counts = new WindowCounts();
    counts.increment("203.0.113.7");
    counts.increment("ada@example.com");
    counts.increment("ada@example.com");
    expect([counts.count("203.0.113.7"), counts.count("ada@example.com"), counts.count("203.0.113.8"), counts.count("bob@example.com")]).toEqual([1, 2, 0, 0]);
    expect(counts.increment("203.0.113.7")).toBe(2);
  });

  it("keeps every count exact while the table grows past a million addresses", () => {
    const counts = new WindowCounts();
    const total = 1_100_000;
    // Consecutive, then strided, addresses: the shapes an address space is handed out in.
    const nth = (i: number) => (i < total / 2 ? 0x0a000000 + i : 0x80000000 + (i - total / 2) * 1031);
    const wrong: string[] = [];
    for (let i = 0; i < total; i++) if (counts.increment(address(nth(i))) !== 1) wrong.push(address(nth(i)));
    for (let i = 0; i < total; i += 997) if (counts.increment(address(nth(i))) !== 2) wrong.push(address(nth(i)));
    expect(wrong).toEqual([]);
    expect(counts.increment("0.0.0.0")).toBe(1);
    expect(counts.increment("255.255.255.255")).toBe(1);
  });
});
