import { describe, expect, it } from "vitest";
import { pollNetwork } from "../../functions/app/kiosk/poll-network.ts";

describe("pollNetwork: the network a poll came from, as the seat checks compare polls", () => {
  it("is one tag for an IPv4 address, another for its neighbour in the /24", () => {
    expect(pollNetwork("198.51.100.7")).toBe(pollNetwork("198.51.100.7"));
    expect(pollNetwork("198.51.100.7")).not.toBe(pollNetwork("198.51.100.8"));
  });

  it("is one tag for every address of an IPv6 /64 (privacy addresses rotate), another for the next /64", () => {
    expect(pollNetwork("2001:db8:1:1::1e")).toBe(pollNetwork("2001:db8:1:1:abcd:1234:5678:9"));
    expect(pollNetwork("2001:db8:1:1::1e")).not.toBe(pollNetwork("2001:db8:1:2::1e"));
  });

  it("is a signed 32-bit integer, as Postgres' integer holds it, and keeps no address", () => {
    for (const ip of ["198.51.100.7", "2001:db8:1:1::1e", "203.0.113.255"]) {
      const tag = pollNetwork(ip)!;
      expect(Number.isInteger(tag) && tag >= -(2 ** 31) && tag < 2 ** 31).toBe(true);
      expect(String(tag)).not.toContain(ip);
    }
  });

  it("is null when the client IP is unknown", () => {
    expect(pollNetwork(null)).toBeNull();
  });
});
