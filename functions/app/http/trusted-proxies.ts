import * as z from "zod";
import { ipv4, ipv6, mask4, mask6, parseNetwork } from "../ip-address.ts";

/**
 * `TRUSTED_PROXIES` when unset: loopback, where the shipped HAProxy runs beside the workers
 * (functions/production/haproxy.cfg), so a caller from anywhere else is counted by its own address.
 */
export const DEFAULT_TRUSTED_PROXIES = "127.0.0.0/8,::1";

/** The upper 96 bits of an IPv4-mapped IPv6 address (`::ffff:0:0/96`): such a peer is the IPv4 client (canonicalIp's rule). */
const MAPPED = 0xffffn;
const LOW_32 = 0xffffffffn;

/**
 * `TRUSTED_PROXIES`: the socket peers whose client-IP header (`CLIENT_IP_HEADER`, `TRUST_PROXY`) is
 * believed, written as nginx's `set_real_ip_from` and Express's `trust proxy` take them: addresses
 * and networks (CIDR), IPv4 or IPv6, separated by commas. Parsed once, at start, into each family's
 * masked networks, so a request's check is one parse of its peer and a comparison per network,
 * never a parse of the list. An IPv4-mapped network (`::ffff:10.0.0.0/104`) is the IPv4 one
 * (`10.0.0.0/8`), as a dual-stack listener's IPv4 peers (`::ffff:10.1.2.3`) are compared as IPv4.
 *
 * @example
 * const proxies = TrustedProxies.parse("127.0.0.0/8,::1");
 * proxies.trusts("127.0.0.1"); // true
 * proxies.trusts("203.0.113.7"); // false
 */
export const TrustedProxies = z.string().transform((text, ctx) => {
  const v4: [length: number, network: number][] = [];
  const v6: [length: number, network: bigint][] = [];
  /** The entries that hold every address of a family (a /0): the header is then believed from anyone. */
  const everyAddress: string[] = [];
  for (const entry of text.split(",").map((part) => part.trim())) {
    const network = parseNetwork(entry);
    if (!network) {
      ctx.addIssue({ code: "custom", message: `${JSON.stringify(entry)} is not an IP address or network: list the proxies, e.g. 127.0.0.1,::1 or 10.0.0.0/8` });
      return z.NEVER;
    }
    let length = network.length;
    if (network.family === 4) {
      v4.push([length, mask4(network.bits as number, length)]);
    } else if (length >= 96 && (network.bits as bigint) >> 32n === MAPPED) {
      length -= 96;
      v4.push([length, mask4(Number((network.bits as bigint) & LOW_32), length)]);
    } else {
      v6.push([length, mask6(network.bits as bigint, length)]);
    }
    if (length === 0) everyAddress.push(entry);
  }

  /** Whether an IPv4 peer (as a number) is inside one of the IPv4 networks. */
  const trustsV4 = (address: number) => {
    for (const [length, network] of v4) if (mask4(address, length) === network) return true;
    return false;
  };
  const matches = (peer: string) => {
    const address = ipv4(peer);
    if (address !== null) return trustsV4(address);
    const bits = ipv6(peer);
    if (bits === null) return false;
    if (bits >> 32n === MAPPED) return trustsV4(Number(bits & LOW_32));
    for (const [length, network] of v6) if (mask6(bits, length) === network) return true;
    return false;
  };
  // Behind a proxy nearly every request has the same peer, the proxy: its verdict is kept, so an
  // IPv6 or IPv4-mapped peer (about 1.2 µs to parse, against 70 ns for IPv4) is parsed once, not per request.
  let lastPeer: string | undefined;
  let lastVerdict = false;

  return {
    /** The list as the operator wrote it, for the start-up line. */
    text,
    everyAddress,
    /** Whether `peer`, a socket peer's address as the server reports it, is one of the proxies. */
    trusts(peer: string | undefined): boolean {
      if (peer === undefined) return false;
      if (peer !== lastPeer) {
        lastVerdict = matches(peer);
        lastPeer = peer;
      }
      return lastVerdict;
    },
  };
});

export type TrustedProxies = z.output<typeof TrustedProxies>;
