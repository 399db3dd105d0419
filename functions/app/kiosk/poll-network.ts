import { DEFAULT_IPV6_PREFIX, rateLimitClient } from "../rate-limit-client.ts";

/**
 * The network a kiosk's call came from, as the seat checks compare polls (two_clocks: a copy keeps
 * its own network poll after poll): the client as the rate limits count one (an IPv4 address, an
 * IPv6 /64, whose privacy addresses rotate), as a 32-bit tag (FNV-1a), so the polls a holder may
 * read keep no address. Null when the client IP is unknown.
 *
 * @example
 * pollNetwork("2001:db8:1:1::1e") === pollNetwork("2001:db8:1:1::9"); // true: one /64
 */
export function pollNetwork(ip: string | null): number | null {
  if (ip === null) return null;
  const client = rateLimitClient(ip, DEFAULT_IPV6_PREFIX);
  let hash = 0x811c9dc5;
  for (let i = 0; i < client.length; i++) hash = Math.imul(hash ^ client.charCodeAt(i), 0x01000193);
  // Postgres' integer is signed.
  return hash | 0;
}
