import { Ratelimit } from "@upstash/ratelimit";
import type { Redis } from "@upstash/redis";
import { BoundedMap } from "../bounded-map.ts";
import type { Logger } from "../log.ts";
import { type LimitResult, type LimitRule, LimiterUnavailable, type RateLimiter } from "./limiter.ts";

export interface UpstashRatelimitOptions {
  /** Names the store in log lines: `upstash` or `redis`. */
  store: string;
  /** The longest a check waits for the store; past it the library answers `reason: "timeout"`. */
  timeoutMs: number;
  /** Rules whose instances are built now rather than on their first check (the contract's, at start-up). */
  rules: LimitRule[];
  log: Logger;
  /** Upstash only: every check also recorded for the Upstash console's rate-limit analytics. */
  analytics?: boolean;
  /** Upstash only: checks also refused when the client is on a deny list edited in the Upstash console. */
  denyLists?: boolean;
  /** Where the edge runtime offers it (`EdgeRuntime.waitUntil`), background work (`pending`) is handed to it. */
  keepAlive?: (work: Promise<unknown>) => void;
}

/**
 * Refused clients each rule's instance remembers, so that a flood from one client is answered from
 * memory until its window ends (@upstash/ratelimit's ephemeral cache); past this many, the client
 * refused longest ago is forgotten and costs one call to the store again.
 */
const REFUSED_CLIENTS_PER_RULE = 10_000;

/**
 * Instances kept, one per rule and limit: the contract's six rules, and one per distinct allowance of a
 * registered venue address (kiosks x 10 on each kiosk route). Past this many the instance used
 * longest ago is dropped, with its ephemeral cache: its next check builds it again.
 */
const INSTANCES_KEPT = 512;

/**
 * The networked limiter: @upstash/ratelimit's fixed window on `redis`, Upstash itself or a plain
 * Redis behind @upstash/redis's interface (plain-redis.ts), so every instance of the function
 * shares the same windows. One `Ratelimit` per rule (and per venue allowance), built once and kept
 * for the life of the process or isolate, as its ephemeral cache needs. Keys are `cadence:ratelimit:<rule>:<identifier>:<window>`,
 * the keys earlier releases counted in, so counts carry over a rolling deploy.
 *
 * The library answers a store it could not hear from in time with `success: true, reason:
 * "timeout"`, and throws on a store error; both are turned into `LimiterUnavailable` here, so each
 * rule's fail mode decides (kiosk routes open, onboarding closed). The store going away and coming
 * back are each logged once, not per request.
 *
 * @example
 * const limiter = upstashRatelimit(new Redis({ url, token }), { store: "upstash", timeoutMs: 500, rules: Object.values(RULES), log });
 */
export function upstashRatelimit(redis: Redis, options: UpstashRatelimitOptions): RateLimiter {
  const { log, keepAlive } = options;
  // Only analytics and deny lists leave work running after a check (`pending`); otherwise it is already settled.
  const background = Boolean(options.analytics || options.denyLists);
  /**
   * By rule name and limit: a venue's allowance is its own instance of the library's fixed window,
   * with the same key prefix, so a venue's count is kept where the contract's would be and carries
   * over when its registration changes mid-window. (The library's `limit(id, { rate })` sets how
   * much one request consumes, not the limit: it cannot give one address a larger allowance.)
   */
  const instances = new BoundedMap<string, { instance: Ratelimit; refused: BoundedMap<string, number> }>({ capacity: INSTANCES_KEPT });
  let answering = true;

  function entryFor(rule: LimitRule) {
    const key = `${rule.name}:${rule.limit}`;
    let entry = instances.get(key);
    if (entry) {
      // Touched, so the allowances in use stay and the ones no longer used go first.
      instances.set(key, entry);
      return entry;
    }
    /** The ephemeral cache, which the library fills: `<prefix>:<identifier>` -> when its refusal ends. */
    const refused = new BoundedMap<string, number>({ capacity: REFUSED_CLIENTS_PER_RULE });
    const instance = new Ratelimit({
      redis,
      limiter: Ratelimit.fixedWindow(rule.limit, `${rule.windowMs} ms`),
      prefix: prefixOf(rule),
      timeout: options.timeoutMs,
      ephemeralCache: refused,
      analytics: options.analytics ?? false,
      enableProtection: options.denyLists ?? false,
    });
    entry = { instance, refused };
    instances.set(key, entry);
    return entry;
  }
  for (const rule of options.rules) entryFor(rule);

  function unavailable(error: unknown): LimiterUnavailable {
    if (answering) {
      answering = false;
      // The reason only: store errors can quote commands, whose keys hold client IPs and e-mails.
      log("warn", "rate_limit_store_unavailable", { store: options.store, reason: reasonOf(error) });
    }
    return error instanceof LimiterUnavailable ? error : new LimiterUnavailable("the store failed", { cause: error });
  }

  return {
    async limit(rule: LimitRule, identifier: string): Promise<LimitResult> {
      let result: Awaited<ReturnType<Ratelimit["limit"]>>;
      try {
        result = await entryFor(rule).instance.limit(identifier);
      } catch (error) {
        throw unavailable(error);
      }
      if (result.reason === "timeout") throw unavailable(new LimiterUnavailable(`no answer within ${options.timeoutMs} ms`));
      if (!answering) {
        answering = true;
        log("info", "rate_limit_store_recovered", { store: options.store });
      }
      if (background) {
        // Handled here whether or not a runtime waits for it: an unhandled rejection ends a Deno process.
        const settled = result.pending.then(undefined, (error: unknown) => {
          log("warn", "rate_limit_background_failed", { store: options.store, reason: reasonOf(error) });
        });
        keepAlive?.(settled);
      }
      // A deny-list refusal has no window (reset 0): it lasts until staff lift it, so the client is told to wait the rule's window.
      const reset = result.reset || (Math.floor(Date.now() / rule.windowMs) + 1) * rule.windowMs;
      return { success: result.success, limit: rule.limit, remaining: result.remaining, reset };
    },
    async refund(rule: LimitRule, identifier: string, reset: number): Promise<void> {
      // The library's windows follow Date.now(), as `limit` above does: past `reset` the counted window is gone.
      if (Date.now() >= reset) return;
      // A negative rate is the library's refund (its fixed-window script runs INCRBY with it, and
      // the ephemeral cache forgets the client's refusal): one command, only when a request failed.
      let result: Awaited<ReturnType<Ratelimit["limit"]>>;
      try {
        result = await entryFor(rule).instance.limit(identifier, { rate: -1 });
      } catch (error) {
        throw unavailable(error);
      }
      if (result.reason === "timeout") throw unavailable(new LimiterUnavailable(`no answer within ${options.timeoutMs} ms`));
    },
    isRefused(rule: LimitRule, identifier: string): boolean {
      const until = instances.get(`${rule.name}:${rule.limit}`)?.refused.get(`${prefixOf(rule)}:${identifier}`);
      return until !== undefined && until > Date.now();
    },
  };
}

const prefixOf = (rule: LimitRule) => `cadence:ratelimit:${rule.name}`;

function reasonOf(error: unknown): string {
  if (error instanceof LimiterUnavailable) return error.message;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") return code;
  if (!(error instanceof Error)) return "unknown";
  // Errors that keep the name "Error" say more by their class.
  return error.name === "Error" ? error.constructor.name : error.name;
}
