import { describe, expect, it } from "vitest";
import { canonicalIp, ipv4, ipv6, mask4, mask6, parseNetwork } from "../../functions/app/ip-address.ts";
import { WindowCounts } from "../../functions/app/rate-limit/window-counts.ts";

// One module reads IP addresses for the client IP, the rate limits and the venue addresses, with
// one rule: a spelling it refuses here is refused by every reader.

describe("IPv4 (ipv4)", () => {
  it("reads dotted-quad IPv4 without leading zeros as a number, and nothing else", () => {
    expect(ipv4("0.0.0.0")).toBe(0);
    expect(ipv4("255.255.255.255")).toBe(0xffffffff);
    expect(ipv4("192.0.2.1")).toBe(0xc0000201);
    for (const other of ["", "1.2.3", "1.2.3.4.5", "256.0.0.1", "1..2.3", "1.2.3.", ".1.2.3", "1.2.3.4 ", "1.2.3.1234", "::1", "a.b.c.d", "01.2.3.4", "1.2.3.00", "1.02.3.4"]) {
      expect(ipv4(other)).toBeNull();
    }
  });

  it("is one rule for every reader: an address with a leading zero is no address to the client IP, nor an IPv4 count to the memory limiter", () => {
    expect(canonicalIp("203.0.113.07")).toBeUndefined();
    expect(canonicalIp("::ffff:203.0.113.07")).toBeUndefined();
    const counts = new WindowCounts();
    counts.increment("203.0.113.7");
    expect(counts.count("203.0.113.07")).toBe(0);
  });
});

describe("IPv6 (ipv6)", () => {
  it("reads `::` compression and a dotted IPv4 tail; refuses two `::`", () => {
    expect(ipv6("::ffff:192.0.2.1")).toBe(0xffffc0000201n);
    expect(ipv6("2001:db8::1")).toBe((0x20010db8n << 96n) | 1n);
    expect(ipv6("1::2::3")).toBeNull();
    expect(ipv6("192.0.2.1")).toBeNull();
  });
});

describe("one address, one spelling (canonicalIp)", () => {
  it("writes IPv6 in RFC 5952's form: lower case, no leading zeros, the longest run of zero groups as ::", () => {
    for (const spelling of ["2001:db8::1", "2001:0db8::1", "2001:db8:0:0:0:0:0:1", "2001:DB8:0000::0001", "2001:db8::0:1"]) {
      expect(canonicalIp(spelling), spelling).toBe("2001:db8::1");
    }
    expect(canonicalIp("2001:db8:0:0:1:0:0:1")).toBe("2001:db8::1:0:0:1");
    expect(canonicalIp("2001:db8:0:1:1:1:1:1")).toBe("2001:db8:0:1:1:1:1:1");
    expect(canonicalIp("0:0:0:0:0:0:0:1")).toBe("::1");
    expect(canonicalIp("fe80:0:0:0:0:0:0:0")).toBe("fe80::");
  });

  it("reads an IPv4-mapped IPv6 address, in any spelling, as the IPv4 address", () => {
    for (const spelling of ["::ffff:1.2.3.4", "::ffff:0102:0304", "::FFFF:102:304", "0:0:0:0:0:ffff:1.2.3.4", "1.2.3.4"]) {
      expect(canonicalIp(spelling), spelling).toBe("1.2.3.4");
    }
  });

  it("is no address for zones, brackets, ports, too many groups or bad digits", () => {
    for (const text of ["fe80::1%eth0", "[2001:db8::1]", "2001:db8::1:443:1:1:1:1:1", "1:2:3:4:5:6:7:8:9", "2001:db8::g", "1::2::3", "::ffff:1.2.3.256", "01.2.3.4", "12345::"]) {
      expect(canonicalIp(text), text).toBeUndefined();
    }
  });
});

describe("networks (parseNetwork, mask4, mask6)", () => {
  it("reads a cidr as Postgres writes it, a bare address as its /32 or /128, and no looser prefix length", () => {
    expect(parseNetwork("203.0.113.0/28")).toEqual({ family: 4, bits: 0xcb007100, length: 28, address: "203.0.113.0", host: false });
    expect(parseNetwork("203.0.113.7")).toMatchObject({ family: 4, length: 32, host: true });
    expect(parseNetwork("2001:db8::/48")).toMatchObject({ family: 6, length: 48, host: false });
    for (const text of ["203.0.113.0/33", "2001:db8::/129", "203.0.113.0/x", "nonsense", "203.0.113.0/", "203.0.113.0/ 8", "203.0.113.0/+8", "203.0.113.0/8/8", "2001:db8::/"]) expect(parseNetwork(text), text).toBeNull();
  });

  it("masks an address to the network of its first bits", () => {
    expect(mask4(ipv4("203.0.113.77")!, 24)).toBe(ipv4("203.0.113.0"));
    expect(mask4(ipv4("203.0.113.77")!, 0)).toBe(0);
    expect(mask6(ipv6("2001:db8:aa:1::7")!, 48)).toBe(ipv6("2001:db8:aa::"));
  });
});
