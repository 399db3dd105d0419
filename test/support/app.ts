import { createApp } from "../../functions/app/app.ts";
import type { Database } from "../../functions/app/db/database.ts";
import { parseConfig } from "../../functions/app/config.ts";
import type { Deps } from "../../functions/app/deps.ts";
import { clientIpSource } from "../../functions/app/http/client-ip.ts";
import type { KioskSightings } from "../../functions/app/kiosk/sightings.ts";
import type { Logger } from "../../functions/app/log.ts";
import { LimiterUnavailable, type RateLimiter } from "../../functions/app/rate-limit/limiter.ts";
import { memoryLimiter } from "../../functions/app/rate-limit/memory.ts";
import { markFakeClocked } from "./clock.ts";

/** A logger that keeps its lines, for tests that inspect what was logged. */
export function memoryLogger() {
  const lines: string[] = [];
  const log: Logger = (level, event, fields = {}) => {
    lines.push(JSON.stringify({ level, event, ...fields }));
  };
  return { log, lines };
}

/**
 * Deps for the app under test: the real database, a memory limiter, a silent logger, the real
 * clock and no sightings written, each replaceable.
 */
export function testDeps(db: Database, overrides: Partial<Deps> = {}): Deps {
  const now = overrides.now ?? Date.now;
  return {
    db,
    writes: db,
    limiter: memoryLimiter(now),
    log: memoryLogger().log,
    now,
    catalogueTtlMs: parseConfig({}).CATALOGUE_TTL_MS,
    ipv6PrefixLength: parseConfig({}).IPV6_RATE_LIMIT_PREFIX,
    // TRUST_PROXY=true off Supabase: X-Forwarded-For's first entry, believed from loopback (testApp's peer).
    clientIpSource: clientIpSource(parseConfig({ TRUST_PROXY: "true" }), { onSupabase: false, edgeRuntime: false }),
    sightings: unrecorded,
    ...overrides,
  } as Deps;
}

/** A limiter that lets every request through, for suites about something else under load. */
export const unlimitedLimiter: RateLimiter = {
  limit: (rule) => Promise.resolve({ success: true, limit: rule.limit, remaining: rule.limit, reset: 0 }),
  isRefused: () => false,
  refund: () => Promise.resolve(),
};

/** A limiter whose store is down: every check fails, and each rule's fail mode decides. */
export const downLimiter: RateLimiter = {
  limit: () => Promise.reject(new LimiterUnavailable("down")),
  isRefused: () => false,
  refund: () => Promise.reject(new LimiterUnavailable("down")),
};

/** Sightings nobody writes: suites about kiosk status give the app a real writer (kioskSightings). */
const unrecorded: KioskSightings = { saw() {} };

let ipCounter = 0;

/** A client IP no other request in this process has used, so rate limits never interfere. */
export function uniqueIp(): string {
  ipCounter += 1;
  return `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
}

/**
 * The app over a database, with a `request` that sends each call from its own client IP unless
 * the caller sets X-Forwarded-For.
 *
 * @example
 * const { request } = testApp(db);
 * const response = await request("/api/v2/groups");
 */
export function testApp(db: Database, overrides: Partial<Deps> = {}) {
  if (overrides.now && overrides.now !== Date.now) markFakeClocked(db);
  const deps = testDeps(db, overrides);
  const app = createApp(deps);
  return {
    app,
    deps,
    request(path: string, init: RequestInit = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has("x-forwarded-for")) headers.set("x-forwarded-for", uniqueIp());
      return app.request(path, { ...init, headers }, { remoteAddr: "127.0.0.1" });
    },
  };
}
