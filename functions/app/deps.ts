import type { AuthUsers } from "./auth-users/auth-users.ts";
import type { Database } from "./db/database.ts";
import type { ClientIpSource } from "./http/client-ip.ts";
import type { KioskSightings } from "./kiosk/sightings.ts";
import type { Logger } from "./log.ts";
import type { Mailer } from "./mail/mailer.ts";
import type { RateLimiter } from "./rate-limit/limiter.ts";
import type { VenueAllowances } from "./venues/venue-allowances.ts";

/** The ports and settings the app is built from; the entry assembles them from the parsed config. */
export interface Deps {
  db: Database;
  /**
   * The same database for single writes (a system name, a validation that sets one), through a lane
   * of fewer connections than the pool (db/write-lane.ts), so a burst of writes never starves reads.
   */
  writes: Database;
  limiter: RateLimiter;
  /**
   * The registered venue addresses (public.venue_addresses), read in the background: a kiosk route
   * allows one its kiosks times the contract's limit. Absent: every address has the contract's limits.
   */
  venues?: VenueAllowances;
  log: Logger;
  /** The longest a request waits on one statement (DATABASE_DEADLINE_MS); unset, the default 2 s. */
  databaseDeadlineMs?: number;
  /** The clock, in epoch milliseconds. */
  now: () => number;
  /** How long the catalogue (and the proclamations it serves) is kept in memory: CATALOGUE_TTL_MS. */
  catalogueTtlMs: number;
  /** Where the client IP comes from (http/client-ip.ts): a trusted proxy's header, or false for the socket peer. */
  clientIpSource: ClientIpSource;
  /** The prefix an IPv6 client is rate limited by (`IPV6_RATE_LIMIT_PREFIX`: rate-limit-client.ts). */
  ipv6PrefixLength: number;
  /** Delivers queued e-mails (console or Resend). */
  mailer: Mailer;
  /** The onboarding webhook's HMAC secret; without it every onboarding request is refused. */
  signingSecret?: string;
  /** The secret being rotated out: accepted as `signingSecret` is until the operator removes it. */
  signingSecretPrevious?: string;
  /** The onboarding webhook's Standard Webhooks secret (`whsec_...`); without it that scheme verifies nothing. */
  standardWebhooksSecret?: string;
  /** Where routes note each kiosk call they answer (public.kiosk_status), written off the request path. */
  sightings: KioskSightings;
  /** Supabase Auth, when Cadence runs on it: each onboarded account becomes an Auth user. */
  authUsers?: AuthUsers;
}
