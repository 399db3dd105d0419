import type { AuthUsers } from "./auth-users/auth-users.ts";
import type { Database } from "./db/database.ts";
import type { ClientIpSource } from "./http/client-ip.ts";
import type { KioskSightings } from "./kiosk/sightings.ts";
import type { Logger } from "./log.ts";
import type { Mailer } from "./mail/mailer.ts";
import type { RateLimiter } from "./rate-limit/limiter.ts";
import type { VenueAllowances } from "./rate-limit/venues.ts";

/** The ports and settings the app is built from; the entry assembles them from the parsed config. */
export interface Deps {
  db: Database;
  limiter: RateLimiter;
  /**
   * The registered venue addresses (public.venue_addresses), read in the background: a kiosk route
   * allows one its kiosks times the spec's limit. Absent: every address has the spec's limits.
   */
  venues?: VenueAllowances;
  log: Logger;
  /** The clock, in epoch milliseconds. */
  now: () => number;
  /** Where the client IP comes from (http/client-ip.ts): a trusted proxy's header, or false for the socket peer. */
  clientIpSource: ClientIpSource;
  /** Delivers queued e-mails (console or Resend). */
  mailer: Mailer;
  /** The onboarding webhook's HMAC secret; without it every onboarding request is refused. */
  signingSecret?: string;
  /** The secret being rotated out: accepted as `signingSecret` is until the operator removes it. */
  signingSecretPrevious?: string;
  /** Where routes note each kiosk call they answer (public.kiosk_status), written off the request path. */
  sightings: KioskSightings;
  /** Supabase Auth, when Cadence runs on it: each onboarded account becomes an Auth user. */
  authUsers?: AuthUsers;
}
