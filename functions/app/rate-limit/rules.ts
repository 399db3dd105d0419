import type { FailMode, LimitRule } from "./limiter.ts";

/**
 * A rule of `limit` requests per minute. Fails open unless told otherwise: kiosks keep working
 * while the store is down.
 */
export const perMinute = (name: string, limit: number, failMode: FailMode = "open"): LimitRule => ({
  name,
  limit,
  windowMs: 60_000,
  failMode,
});

/** A kiosk route's rule of `limit` requests per minute per address, times the kiosks of a registered venue address. */
const perKioskPerMinute = (name: string, limit: number): LimitRule => ({ ...perMinute(name, limit), perKiosk: true });

/** A rule of `limit` requests per 24 hours: a fixed window, as every rule here, so it resets at 00:00 UTC. */
export const perDay = (name: string, limit: number, failMode: FailMode = "open"): LimitRule => ({
  name,
  limit,
  windowMs: 24 * 60 * 60_000,
  failMode,
});

/**
 * The contract's limits, every one in one place: 10 per minute per client IP on each kiosk route, a
 * bucket per route (a kiosk polling its schedule can still validate its license), and a registered
 * venue address (public.venue_addresses) that many times its kiosks; onboarding 5 per
 * minute per client IP and 3 per 24 hours per e-mail address (normalized, so case variants share a
 * bucket), both failing closed: an unchecked flood would create accounts and send mail. One more,
 * where the contract is silent: failed pairings per client (rate-limit/failed-pairings.ts).
 */
export const RULES = {
  license: perKioskPerMinute("license", 10),
  systemName: perKioskPerMinute("system-name", 10),
  licenseSchedule: perKioskPerMinute("license-schedule", 10),
  legacySchedule: perKioskPerMinute("schedule", 10),
  onboardingPerIp: perMinute("onboarding", 5, "closed"),
  onboardingPerEmail: perDay("onboarding-email", 3, "closed"),
  // Not the contract's: the signed lifecycle calls (automations/), one bucket per client IP for all
  // of them, failing closed as onboarding does; a platform ending many subscriptions at once sends
  // them in a burst, so more than onboarding's 5. A key's license e-mail is sent again at most 3
  // times a day, as many as onboarding sends to one e-mail address.
  lifecyclePerIp: perMinute("lifecycle", 60, "closed"),
  resendPerKey: perDay("resend-license-email", 3, "closed"),
  // Not the contract's: failed pairings (a key and an e-mail that do not go together) per client, one
  // count over the credentialed proclamations read, the legacy schedule read and license validation,
  // which answer differently for an e-mail with an account: without it, one address tried 1,000
  // e-mails in 0.75 s. A kiosk with a valid pair fails none; fails open like the kiosk routes.
  failedPairings: perMinute("failed-pairing", 10),
} satisfies Record<string, LimitRule>;
