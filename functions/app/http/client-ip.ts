import type { Context } from "hono";
import * as z from "zod";
import { canonicalIp } from "../ip-address.ts";
import type { ConnectionInfo, Env } from "./route.ts";
import { DEFAULT_TRUSTED_PROXIES, TrustedProxies } from "./trusted-proxies.ts";

/**
 * The client of every request whose chosen header is missing or not an IP address. It is one
 * identifier, so such requests share one rate-limit bucket per route: limited, never unlimited.
 */
export const UNKNOWN_CLIENT = "unknown";

/**
 * Supabase's default (see functions/README.md, "Client IP"): its API traffic runs through Cloudflare, which
 * writes `CF-Connecting-IP` itself, while it appends to a client-sent `X-Forwarded-For`.
 */
export const SUPABASE_CLIENT_IP_HEADER = "cf-connecting-ip";

/** The most proxies `x-forwarded-for:N` may name: the two digits `ClientIpHeader` reads. */
export const MOST_PROXIES = 99;

/**
 * `CLIENT_IP_HEADER`, the header a trusted proxy names the client in:
 * - `x-forwarded-for`: its first entry (only behind a proxy that overwrites the header);
 * - `x-forwarded-for:N`: the entry N from the right, behind N trusted proxies that each append;
 * - `x-real-ip`, `cf-connecting-ip`: the whole value, one address written by the proxy.
 * Parsed once into `{ name, header, fromRight }`; `fromRight` is null for the first entry or the
 * whole value.
 */
export const ClientIpHeader = z
  .string()
  .toLowerCase()
  .regex(/^(x-forwarded-for(:[1-9][0-9]?)?|x-real-ip|cf-connecting-ip)$/, {
    message: `must be x-forwarded-for, x-forwarded-for:N (N from 1 to ${MOST_PROXIES}), x-real-ip or cf-connecting-ip`,
  })
  .transform((name) => {
    const [header, hops] = name.split(":");
    return { name, header, fromRight: hops === undefined ? null : Number(hops) };
  });

export type ClientIpHeader = z.output<typeof ClientIpHeader>;

/**
 * Where the client IP comes from: a proxy's header, believed only from a socket peer in `proxies`
 * (null: from any peer, on Supabase's Edge Runtime, where every request's peer is the platform's
 * gateway), or (false) the socket peer itself.
 */
export type ClientIpSource = (ClientIpHeader & { proxies: TrustedProxies | null }) | false;

/** Where the process runs, as far as the client IP is concerned. */
export interface ClientIpPlace {
  /** Supabase's database (`SUPABASE_DB_URL` without `DATABASE_URL`): the header defaults to `CF-Connecting-IP`. */
  onSupabase: boolean;
  /**
   * A worker of Supabase's Edge Runtime: requests reach it only through the platform's gateway,
   * whose address is neither documented nor stable, so there is no peer to check the header against.
   */
  edgeRuntime: boolean;
}

/**
 * The one place that decides where the client IP comes from: `CLIENT_IP_HEADER` when set; on
 * Supabase, `CF-Connecting-IP`; else `X-Forwarded-For`'s first entry with `TRUST_PROXY=true`, or
 * the socket peer. A header is believed only from `TRUSTED_PROXIES` (loopback by default), except
 * on the Edge Runtime, where the platform is every request's peer.
 *
 * @example
 * const source = clientIpSource(config, { onSupabase, edgeRuntime: onEdgeRuntime() });
 */
export function clientIpSource(
  config: { CLIENT_IP_HEADER?: ClientIpHeader; TRUST_PROXY: boolean; TRUSTED_PROXIES?: TrustedProxies },
  place: ClientIpPlace,
): ClientIpSource {
  let header = config.CLIENT_IP_HEADER;
  if (!header && place.onSupabase) header = ClientIpHeader.parse(SUPABASE_CLIENT_IP_HEADER);
  if (!header && config.TRUST_PROXY) header = ClientIpHeader.parse("x-forwarded-for");
  if (!header) return false;
  return { ...header, proxies: place.edgeRuntime ? null : config.TRUSTED_PROXIES ?? TrustedProxies.parse(DEFAULT_TRUSTED_PROXIES) };
}

/**
 * The source as the start-up line names it: `x-real-ip from 127.0.0.0/8,::1`, `cf-connecting-ip
 * from any peer` (the Edge Runtime), `socket peer`.
 *
 * @example
 * log("info", "listening", { clientIp: describeClientIp(source) });
 */
export function describeClientIp(source: ClientIpSource): string {
  if (!source) return "socket peer";
  return `${source.name} from ${source.proxies ? source.proxies.text : "any peer"}`;
}

/**
 * The start-up warning of a source that believes its header from every address of a family
 * (`TRUSTED_PROXIES` holding 0.0.0.0/0 or ::/0): whoever reaches the port picks its own client IP.
 * Undefined when there is none to give.
 *
 * @example
 * const warning = everyAddressWarning(source);
 * if (warning) log("warn", "client_ip_header_from_every_address", warning);
 */
export function everyAddressWarning(source: ClientIpSource): Record<string, string> | undefined {
  if (!source || !source.proxies || source.proxies.everyAddress.length === 0) return undefined;
  return {
    variable: "TRUSTED_PROXIES",
    networks: source.proxies.everyAddress.join(","),
    why: `${source.name} is believed from every address these hold: a caller who reaches the port directly picks its own rate-limit bucket and last_seen_ip; list only the proxies' addresses`,
  };
}

/** The entry of a header's value that `source` names, untrimmed. */
function entryOf(value: string, source: ClientIpHeader): string | undefined {
  if (source.header !== "x-forwarded-for") return value;
  if (source.fromRight === null) return value.split(",", 1)[0];
  const entries = value.split(",");
  return entries[entries.length - source.fromRight];
}

/**
 * The client IP kiosk sightings record and rate limits start from: the address in the chosen
 * header when the socket peer is a trusted proxy, else the socket peer, in its one canonical
 * spelling (`canonicalIp`: IPv4-mapped IPv6 as IPv4, IPv6 in RFC 5952's form); `UNKNOWN_CLIENT`
 * when the header a proxy sent is missing, names too few proxies, or does not hold an IP address.
 *
 * @example
 * clientIp(request, c.env, deps.clientIpSource); // "203.0.113.7"
 */
export function clientIp(request: Request, connection: ConnectionInfo | undefined, source: ClientIpSource): string {
  const peer = connection?.remoteAddr;
  if (source === false || (source.proxies !== null && !source.proxies.trusts(peer))) return canonicalIp(peer) ?? peer ?? UNKNOWN_CLIENT;
  const value = request.headers.get(source.header);
  if (value === null) return UNKNOWN_CLIENT;
  return canonicalIp(entryOf(value, source)?.trim()) ?? UNKNOWN_CLIENT;
}

/**
 * `clientIp` of `c`'s request, worked out once: a kiosk route asks twice (its rate limit, then its
 * sighting), and the answer cannot change within a request.
 *
 * @example
 * const ip = requestClientIp(c, deps.clientIpSource);
 */
export function requestClientIp(c: Context<Env>, source: ClientIpSource): string {
  let ip = c.get("clientIp");
  if (ip === undefined) {
    ip = clientIp(c.req.raw, c.env, source);
    c.set("clientIp", ip);
  }
  return ip;
}
