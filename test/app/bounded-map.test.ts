import { describe, expect, it } from "vitest";
import { BoundedMap } from "../../functions/app/bounded-map.ts";

describe("the bounded map every in-process cache is", () => {
  it("keeps at most `capacity` entries, dropping the one set longest ago", () => {
    const map = new BoundedMap<string, number>({ capacity: 2 });
    map.set("a", 1).set("b", 2).set("a", 3).set("c", 4);
    expect([...map]).toEqual([["a", 3], ["c", 4]]);
  });

  it("keeps at most `maxBytes` of values as `sizeOf` counts them, and counts a deleted or replaced value out", () => {
    const map = new BoundedMap<string, string>({ capacity: 100, maxBytes: 10, sizeOf: (text) => text.length });
    map.set("a", "12345").set("b", "1234");
    expect(map.bytes).toBe(9);
    map.set("c", "12");
    expect([...map.keys()]).toEqual(["b", "c"]);
    expect(map.bytes).toBe(6);
    map.set("b", "1");
    map.delete("c");
    expect(map.bytes).toBe(1);
    map.clear();
    expect(map.bytes).toBe(0);
  });

  it("is a Map, as @upstash/ratelimit's ephemeralCache must be", () => {
    expect(new BoundedMap({ capacity: 1 })).toBeInstanceOf(Map);
  });
});
