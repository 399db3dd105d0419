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
 * Spec section 8, every limit in one place: 10 per minute per client IP on each kiosk route, a
 * bucket per route (a kiosk polling its schedule can still validate its license), and a registered
 * venue address (public.venue_addresses) that many times its kiosks; onboarding 5 per
 * minute per client IP and 3 per 24 hours per e-mail address (normalized, so case variants share a
 * bucket), both failing closed: an unchecked flood would create accounts and send mail.
 */
export const RULES = {
  license: perKioskPerMinute("license", 10),
  systemName: perKioskPerMinute("system-name", 10),
  licenseSchedule: perKioskPerMinute("license-schedule", 10),
  legacySchedule: perKioskPerMinute("schedule", 10),
  onboardingPerIp: perMinute("onboarding", 5, "closed"),
  onboardingPerEmail: perDay("onboarding-email", 3, "closed"),
} satisfies Record<string, LimitRule>;
