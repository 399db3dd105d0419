// IP addresses, one rule for every reader (client IP, rate limits, venue addresses): parse,
// canonicalise, and the network of a prefix (who is one client: rate-limit-client.ts).

/** The longest textual IP address (an IPv6 one ending in dotted IPv4); anything longer is not one. */
const LONGEST_ADDRESS = 45;
const HEX_GROUP = /^[0-9a-f]{1,4}$/;

/**
 * A dotted-quad IPv4 address as an unsigned 32-bit number, or null for anything else: four decimal
 * octets of 0 to 255 without leading zeros (`01.2.3.4` is refused: some parsers read it as octal).
 * A loop over the characters, not a regular expression: the in-memory limiter calls it on every check.
 *
 * @example
 * ipv4("203.0.113.7"); // 3405803783
 * ipv4("203.0.113.07"); // null
 */
export function ipv4(text: string): number | null {
  let address = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let at = 0; at < text.length; at++) {
    const char = text.charCodeAt(at);
    if (char === 0x2e) {
      if (digits === 0 || dots === 3) return null;
      address = address * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else if (char >= 0x30 && char <= 0x39 && digits < 3 && !(digits === 1 && octet === 0)) {
      octet = octet * 10 + char - 0x30;
      digits++;
      if (octet > 255) return null;
    } else {
      return null;
    }
  }
  if (dots !== 3 || digits === 0) return null;
  return address * 256 + octet;
}

/** An IPv6 address as its eight 16-bit groups; undefined when `text` is not one (zones and brackets are not). */
export function ipv6Groups(text: string): number[] | undefined {
  let body = text.toLowerCase();
  const tail: number[] = [];
  // A dotted IPv4 address may end an IPv6 one (`::ffff:192.0.2.1`): it is the last two groups.
  const dotted = /^(.*:)([0-9.]+)$/.exec(body);
  if (dotted && dotted[2].includes(".")) {
    const address = ipv4(dotted[2]);
    if (address === null) return undefined;
    tail.push(address >>> 16, address & 0xffff);
    body = dotted[1].endsWith("::") ? dotted[1] : dotted[1].slice(0, -1);
  }
  const halves = body.split("::");
  if (halves.length > 2) return undefined;
  const parse = (part: string) => (part === "" ? [] : part.split(":"));
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  if (![...head, ...rest].every((group) => HEX_GROUP.test(group))) return undefined;
  const explicit = head.length + rest.length + tail.length;
  if (halves.length === 1 ? explicit !== 8 : explicit > 7) return undefined;
  const zeros = new Array<number>(8 - explicit).fill(0);
  return [...head.map((g) => parseInt(g, 16)), ...zeros, ...rest.map((g) => parseInt(g, 16)), ...tail];
}

/** Eight groups in RFC 5952's form: lower case, no leading zeros, the longest run of two or more zero groups (the first of equals) as `::`. */
export function rfc5952(groups: number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart < 0) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}

/** Whether eight groups are an IPv4-mapped IPv6 address (`::ffff:0:0/96`), which is the IPv4 client itself. */
const isIpv4Mapped = (groups: number[]) => groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;

/**
 * `text` as an IP address in its one canonical spelling, so one client cannot open several
 * rate-limit buckets by respelling its address: IPv4 in dotted decimal, IPv4-mapped IPv6 (in any
 * spelling: `::ffff:1.2.3.4`, `::ffff:0102:0304`, `0:0:0:0:0:ffff:102:304`) as that IPv4 address,
 * any other IPv6 in RFC 5952's form. Undefined when it is not an address.
 *
 * @example
 * canonicalIp("2001:0DB8:0:0:0:0:0:1"); // "2001:db8::1"
 * canonicalIp("::ffff:0102:0304"); // "1.2.3.4"
 */
export function canonicalIp(text: string | undefined): string | undefined {
  if (!text || text.length > LONGEST_ADDRESS) return undefined;
  if (ipv4(text) !== null) return text;
  const groups = ipv6Groups(text);
  if (!groups) return undefined;
  if (isIpv4Mapped(groups)) return `${groups[6] >> 8}.${groups[6] & 255}.${groups[7] >> 8}.${groups[7] & 255}`;
  return rfc5952(groups);
}

/** An IPv6 address (`::` compression and a dotted IPv4 tail allowed) as a 128-bit number, or null: the groups `canonicalIp` reads. */
export function ipv6(text: string): bigint | null {
  const groups = text.includes(":") ? ipv6Groups(text) : undefined;
  return groups ? groups.reduce((bits, group) => (bits << 16n) | BigInt(group), 0n) : null;
}

/** A prefix length as written after the slash: one to three decimal digits, nothing else (`Number` reads "" as 0). */
const PREFIX_LENGTH = /^[0-9]{1,3}$/;

/**
 * A network as Postgres writes a cidr (`203.0.113.0/28`, `2001:db8::/48`; an address alone is a
 * host), or null if it is neither. Strict, as an operator's setting (TRUSTED_PROXIES) passes here
 * too: `10.0.0.1/` is not a /0.
 */
export function parseNetwork(text: string): { family: 4 | 6; bits: number | bigint; length: number; address: string; host: boolean } | null {
  const [address, lengthText, ...rest] = text.split("/");
  if (rest.length > 0 || (lengthText !== undefined && !PREFIX_LENGTH.test(lengthText))) return null;
  const v4 = ipv4(address);
  if (v4 !== null) {
    const length = lengthText === undefined ? 32 : Number(lengthText);
    return Number.isInteger(length) && length >= 0 && length <= 32 ? { family: 4, bits: v4, length, address, host: length === 32 } : null;
  }
  const v6 = ipv6(address);
  if (v6 === null) return null;
  const length = lengthText === undefined ? 128 : Number(lengthText);
  return Number.isInteger(length) && length >= 0 && length <= 128 ? { family: 6, bits: v6, length, address, host: length === 128 } : null;
}

/** The network of an IPv4 address's first `length` bits, as a number. */
export const mask4 = (address: number, length: number) => length === 0 ? 0 : (address & (~0 << (32 - length))) >>> 0;
const ALL_V6 = (1n << 128n) - 1n;
/** The network of an IPv6 address's first `length` bits, as a number. */
export const mask6 = (address: bigint, length: number) => address & (ALL_V6 ^ ((1n << BigInt(128 - length)) - 1n));
