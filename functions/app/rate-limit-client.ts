import type { Context } from "hono";
import { type ClientIpSource, requestClientIp } from "./http/client-ip.ts";
import type { Env } from "./http/route.ts";
import { ipv6Groups, rfc5952 } from "./ip-address.ts";

// Who counts as one client for the rate limits, the venue addresses and the proxy's connection caps
// (functions/production/haproxy.cfg's `src,ipmask(32,64)` follows the default here).

/**
 * The prefix length an IPv6 client is limited by when `IPV6_RATE_LIMIT_PREFIX` is unset: an end
 * site holds at least a /64 (SLAAC needs one), so each of its 2^64 addresses is the same client.
 */
export const DEFAULT_IPV6_PREFIX = 64;

/**
 * The rate-limit client of a canonical address: an IPv4 address itself, an IPv6 address the
 * network of its first `prefixLength` bits, written `<network>/<length>` (`2001:db8:1:1::/64`);
 * /128 is one address. Anything that is not an address is returned as it is (the `unknown` client).
 *
 * @example
 * rateLimitClient("2001:db8:1:1::1e", 64); // "2001:db8:1:1::/64"
 */
export function rateLimitClient(address: string, prefixLength: number): string {
  if (!address.includes(":")) return address;
  const groups = ipv6Groups(address);
  if (!groups) return address;
  const network = groups.map((group, i) => {
    const bits = Math.min(16, Math.max(0, prefixLength - i * 16));
    return bits === 0 ? 0 : group & ((0xffff << (16 - bits)) & 0xffff);
  });
  return `${rfc5952(network)}/${prefixLength}`;
}

/**
 * The identifier `c`'s request is rate limited by: its client IP (`requestClientIp`) as
 * `rateLimitClient` counts it, so rotating through the addresses of one network opens no new bucket.
 *
 * @example
 * await enforceLimit(deps, rule, rateLimitIdentifier(c, deps.clientIpSource, deps.ipv6PrefixLength));
 */
export function rateLimitIdentifier(c: Context<Env>, source: ClientIpSource, prefixLength: number): string {
  return rateLimitClient(requestClientIp(c, source), prefixLength);
}
