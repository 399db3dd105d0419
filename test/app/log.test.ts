import { describe, expect, it } from "vitest";
import { errorMessage } from "../../functions/app/log.ts";

describe("errorMessage", () => {
  it("gives an Error's message, or its name when the message is empty", () => {
    expect(errorMessage(new TypeError("bad input"))).toBe("bad input");
    expect(errorMessage(new RangeError())).toBe("RangeError");
  });

  it("gives the message of a plain object thrown as an error, never [object Object]", () => {
    expect(errorMessage({ message: "connection reset", code: "ECONNRESET" })).toBe("connection reset");
    expect(errorMessage({ code: "57P01", severity: "FATAL" })).toBe('{"code":"57P01","severity":"FATAL"}');
  });

  it("names an object that cannot be written as JSON", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(errorMessage(cyclic)).toBe("Object (not serialisable)");
    expect(errorMessage({ size: 1n })).toBe("Object (not serialisable)");
  });

  it("gives anything else as text", () => {
    expect(errorMessage("timeout")).toBe("timeout");
    expect(errorMessage(undefined)).toBe("undefined");
  });
});
