import { describe, expect, it } from "vitest";
import { UNKNOWN_CLIENT } from "../../functions/app/http/client-ip.ts";
import { DEFAULT_IPV6_PREFIX, rateLimitClient } from "../../functions/app/rate-limit-client.ts";

// Who counts as one client, for the rate limits, the venue addresses and HAProxy's caps alike.

describe("the rate-limit client of an address (rateLimitClient)", () => {
  it("is an IPv4 address itself, an IPv6 address the network of its prefix", () => {
    expect(rateLimitClient("198.51.100.7", 64)).toBe("198.51.100.7");
    expect(rateLimitClient("2001:db8:1:1::1e", 64)).toBe("2001:db8:1:1::/64");
    expect(rateLimitClient("2001:db8:1:1ff::1", 56)).toBe("2001:db8:1:100::/56");
    expect(rateLimitClient("2001:db8:1:1::1e", 128)).toBe("2001:db8:1:1::1e/128");
    expect(rateLimitClient(UNKNOWN_CLIENT, 64)).toBe(UNKNOWN_CLIENT);
  });

  it("counts an IPv6 end site's /64 as one client unless IPV6_RATE_LIMIT_PREFIX says otherwise", () => {
    expect(DEFAULT_IPV6_PREFIX).toBe(64);
    expect(rateLimitClient("2001:db8:1:1::1", DEFAULT_IPV6_PREFIX)).toBe(rateLimitClient("2001:db8:1:1:ffff:ffff:ffff:fffe", DEFAULT_IPV6_PREFIX));
  });
});
