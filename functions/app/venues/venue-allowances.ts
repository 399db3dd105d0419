import type { Database } from "../db/database.ts";
import { isUnavailable } from "../db/unavailable.ts";
import type { Logger } from "../log.ts";
import { errorMessage } from "../log.ts";
import { canonicalIp, ipv4, ipv6, mask4, mask6, parseNetwork } from "../ip-address.ts";
import { rateLimitClient } from "../rate-limit-client.ts";
import type { ClientAllowances } from "../rate-limit/limiter.ts";
import { type Venue, venueLimits } from "./venue-limit.ts";
import { unrefTimer } from "../unref-timer.ts";

/**
 * How often an instance reads the registrations again: a change reaches every running instance
 * within this plus one read (well within the minute the issue allows), at one statement per
 * instance per interval, whatever the traffic.
 */
export const VENUES_REFRESH_MS = 30_000;
/**
 * The most registrations an instance holds (about 100 bytes each: a few MB at most). Past it the
 * smallest allowances are left out (cadence.venue_allowances orders by kiosks), and those venues
 * get the contract's limit, never more.
 */
export const VENUES_KEPT = 100_000;

const NONE: readonly Venue[] = [];

/** The registered venue addresses, as one instance knows them (public.venue_addresses). */
export interface VenueAllowances extends ClientAllowances {
  /** The registered networks holding `ip`, most specific first, from memory only: never a database read on the request path. */
  lookup(ip: string): readonly Venue[];
  /** Reads the registrations now (the timer does this every `refreshEveryMs`). */
  refresh(): Promise<void>;
  close(): void;
}

export interface VenueAllowancesOptions {
  db: Database;
  log: Logger;
  refreshEveryMs?: number;
  most?: number;
}

/** One address family's registrations: for each prefix length registered, longest first, network (as a number) -> venue. */
type Table<A> = [length: number, venues: Map<A, Venue>][];

/**
 * Keeps every registered venue address in memory, read in one statement at start and then every
 * `refreshEveryMs` in the background (a timer that never keeps the process alive). A lookup masks
 * the client IP with each prefix length registered (IPv4 /24-/32, IPv6 /48-/128, a handful at
 * most) and finds its venues in maps: an unregistered address costs a few map lookups and no round
 * trip. A read that fails keeps what was known; until the first read succeeds, every address
 * counts as unregistered (the middleware waits for that read only when it would refuse).
 *
 * @example
 * const venues = venueAllowances({ db, log });
 * venues.lookup("203.0.113.7"); // [{ identifier: "203.0.113.0/28", kiosks: 20 }], or []
 */
export function venueAllowances(options: VenueAllowancesOptions): VenueAllowances {
  const { db, log } = options;
  const most = options.most ?? VENUES_KEPT;
  let v4: Table<number> = [];
  let v6: Table<bigint> = [];
  let loaded = false;
  let running: Promise<void> | undefined;
  let truncatedLogged = false;

  async function read(): Promise<void> {
    try {
      const rows = await db.query<{ network: string; kiosks: number }>("select network, kiosks from cadence.venue_allowances($1)", [most]);
      const next4 = new Map<number, Map<number, Venue>>();
      const next6 = new Map<number, Map<bigint, Venue>>();
      for (const row of rows) {
        const parsed = parseNetwork(row.network);
        if (!parsed) continue;
        // Spelt as the client's own bucket is (http/client-ip.ts), so a registration of exactly that client is that bucket.
        const identifier = parsed.family === 4 ? (parsed.host ? parsed.address : row.network) : rateLimitClient(canonicalIp(parsed.address) ?? parsed.address, parsed.length);
        const venue = { identifier, kiosks: row.kiosks };
        if (parsed.family === 4) put(next4, parsed.length, mask4(parsed.bits as number, parsed.length), venue);
        else put(next6, parsed.length, mask6(parsed.bits as bigint, parsed.length), venue);
      }
      v4 = longestFirst(next4);
      v6 = longestFirst(next6);
      loaded = true;
      if (rows.length >= most && !truncatedLogged) {
        truncatedLogged = true;
        log("warn", "venue_allowances_truncated", { kept: most });
      }
    } catch (error) {
      // An outage is logged once where it is detected (db/availability.ts); the next read retries.
      if (!isUnavailable(error)) log("error", "venue_allowances_failed", { error: errorMessage(error) });
    }
  }

  function refresh(): Promise<void> {
    running ??= read().finally(() => (running = undefined));
    return running;
  }

  const firstLoad = refresh();
  const timer: unknown = setInterval(() => void refresh(), options.refreshEveryMs ?? VENUES_REFRESH_MS);
  unrefTimer(timer);

  return {
    lookup,
    limitsFor: (rule, client, identifier) => venueLimits(rule.perKiosk ? lookup(client) : NONE, rule, identifier),
    get loaded() {
      return loaded;
    },
    firstLoad,
    refresh,
    close() {
      clearInterval(timer as Parameters<typeof clearInterval>[0]);
    },
  };

  function lookup(ip: string): readonly Venue[] {
    const address = ipv4(ip);
    if (address !== null) return v4.length === 0 ? NONE : matches(v4, (length) => mask4(address, length));
    if (v6.length === 0) return NONE;
    const bits = ipv6(ip);
    return bits === null ? NONE : matches(v6, (length) => mask6(bits, length));
  }
}

function matches<A>(table: Table<A>, network: (length: number) => A): readonly Venue[] {
  let found: Venue[] | undefined;
  for (const [length, venues] of table) {
    const venue = venues.get(network(length));
    if (venue) (found ??= []).push(venue);
  }
  return found ?? NONE;
}

const longestFirst = <A>(byLength: Map<number, Map<A, Venue>>): Table<A> => [...byLength].sort(([a], [b]) => b - a);

function put<A>(table: Map<number, Map<A, Venue>>, length: number, network: A, venue: Venue) {
  let venues = table.get(length);
  if (!venues) table.set(length, (venues = new Map()));
  venues.set(network, venue);
}
