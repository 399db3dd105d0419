import { createServer, type Server, type Socket } from "node:net";
import { createClient } from "redis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { Failure } from "../../functions/app/errors.ts";
import { createLimiter, type LimiterStore } from "../../functions/app/rate-limit/create-limiter.ts";
import { enforceLimit } from "../../functions/app/rate-limit/enforce-limit.ts";
import { LimiterUnavailable, type RateLimiter } from "../../functions/app/rate-limit/limiter.ts";
import { memoryLimiter } from "../../functions/app/rate-limit/memory.ts";
import { openPlainRedis, type PlainRedis } from "../../functions/app/rate-limit/plain-redis.ts";
import { perDay, perMinute } from "../../functions/app/rate-limit/rules.ts";
import { downLimiter, memoryLogger, testApp } from "../support/app.ts";
import { testClock, utcDayStart } from "../support/clock.ts";
import { freshDatabase } from "../support/database.ts";
import { PATIENT } from "../support/patient-store.ts";
import { freePort } from "../support/postgres-server.ts";
import { type RedisServer, redisServerAvailable, startRedis } from "../support/redis.ts";
import { startUpstashStub, type UpstashStub } from "../support/upstash-stub.ts";

/**
 * Waits out the end of the current minute if it is near, so that checks of a per-minute rule made
 * now (a fixed window, the epoch's minutes, on the real clock) cannot straddle two windows.
 */
async function awayFromWindowEnd() {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 5_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

const haveRedis = redisServerAvailable();
const needsRedis = haveRedis ? "" : " [SKIPPED: no redis-server on this machine]";

let redisServer: RedisServer | undefined;
beforeAll(async () => {
  if (haveRedis) redisServer = await startRedis();
});
afterAll(async () => {
  await redisServer?.stop();
});

/** 12:00:15.5 UTC today: 44.5 s before the minute window ends, so Retry-After is 45. */
const START = utcDayStart() + (12 * 3600 + 15.5) * 1000;
const silent = memoryLogger().log;
const unique = (name: string) => `${name}-${crypto.randomUUID().slice(0, 8)}`;
const ip = "203.0.113.7";

/** The plain Redis door the runtime opens for `REDIS_URL`, on the test's redis-server, patient (PATIENT). */
const plainRedis = (url = redisServer!.url) => openPlainRedis(url, { commandTimeoutMs: PATIENT.checkMs, connectWaitMs: PATIENT.connectMs, log: silent });

/** A node-redis client of the test's own, to look at the server: INFO, keys, SCRIPT FLUSH. */
async function inspector(url = redisServer!.url) {
  const client = createClient({ url });
  await client.connect();
  return client;
}

/** Every command redis-server has run since the last CONFIG RESETSTAT, by name, from INFO commandstats (what Upstash bills). */
async function commandCounts(client: Awaited<ReturnType<typeof inspector>>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const match of String(await client.sendCommand(["INFO", "commandstats"])).matchAll(/^cmdstat_([\w|]+):calls=(\d+),/gm)) {
    if (!["info", "config|resetstat"].includes(match[1])) counts[match[1]] = Number(match[2]);
  }
  return counts;
}

/** The commands an Upstash stub received, one HTTP request or a pipeline of several. */
function commandsSent(stub: UpstashStub): unknown[][] {
  return stub.requests.flatMap((request) => (request.path === "/pipeline" ? (request.body as unknown[][]) : [request.body as unknown[]]));
}

/** Settles `promise`, or fails the test as hung: far above the 500 ms bound, far below "forever". */
function settlesSoon<T>(promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("the limiter hung")), 5_000);
  });
  return Promise.race([promise, hung]).finally(() => clearTimeout(timer));
}

async function refusal(promise: Promise<unknown>): Promise<Failure> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(Failure);
  return error as Failure;
}

/** Checks `rule` for `identifier` until it answers (the store is back), or fails after `withinMs`. */
async function answeredWithin(store: LimiterStore, withinMs: number) {
  const until = performance.now() + withinMs;
  for (;;) {
    try {
      return await store.limiter.limit(perMinute(unique("probe"), 10), ip);
    } catch (error) {
      if (!(error instanceof LimiterUnavailable) || performance.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

interface StoreUnderTest {
  name: string;
  requiresRedis: boolean;
  open(): Promise<{ store: LimiterStore; close(): Promise<void> }>;
}

/** Every store, opened the way the runtime opens it: through `createLimiter` and its config (with the PATIENT bounds: these tests are of counting). */
const stores: StoreUnderTest[] = [
  {
    name: "memory",
    requiresRedis: false,
    async open() {
      const store = await createLimiter({}, silent, () => Date.now());
      return { store, close: () => store.close() };
    },
  },
  {
    name: "Redis (REDIS_URL: @upstash/ratelimit through node-redis)",
    requiresRedis: true,
    async open() {
      const store = await createLimiter({ REDIS_URL: redisServer!.url }, silent, () => Date.now(), { bounds: PATIENT });
      return { store, close: () => store.close() };
    },
  },
  {
    name: "Upstash (UPSTASH_REDIS_REST_URL: @upstash/ratelimit over the REST API, stubbed over real Redis)",
    requiresRedis: true,
    async open() {
      const backend = await plainRedis();
      const stub = await startUpstashStub(backend.requester);
      const store = await createLimiter({ UPSTASH_REDIS_REST_URL: stub.url, UPSTASH_REDIS_REST_TOKEN: stub.token }, silent, () => Date.now(), {
        bounds: PATIENT,
      });
      return {
        store,
        async close() {
          await store.close();
          await stub.stop();
          await backend.close();
        },
      };
    },
  },
];

for (const subject of stores) {
  describe.skipIf(subject.requiresRedis && !haveRedis)(
    `fixed window of 10 per minute per client IP, on the ${subject.name} store${subject.requiresRedis ? needsRedis : ""}`,
    () => {
      let opened: Awaited<ReturnType<StoreUnderTest["open"]>>;
      // @upstash/ratelimit reads Date.now() itself, so every store sees the faked Date.
      const deps = { get limiter() { return opened.store.limiter; }, now: () => Date.now() };
      beforeAll(async () => {
        opened = await subject.open();
      });
      afterAll(async () => {
        await opened.close();
      });
      beforeEach(() => {
        vi.useFakeTimers({ toFake: ["Date"], now: START });
      });
      afterEach(() => {
        vi.useRealTimers();
      });

      it("50 simultaneous requests from one IP to one route: exactly 10 pass and 40 get 429 with Retry-After", async () => {
        const rule = perMinute(unique("license"), 10);
        const outcomes = await Promise.allSettled(Array.from({ length: 50 }, () => enforceLimit(deps, rule, ip)));

        const passed = outcomes.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []));
        const refused = outcomes.flatMap((outcome) => (outcome.status === "rejected" ? [outcome.reason] : []));
        expect(passed).toHaveLength(10);
        expect(refused).toHaveLength(40);
        // Each pass took its own slot: the counter is atomic under concurrency.
        expect(passed.map((headers) => Number(headers["RateLimit-Remaining"])).sort((a, b) => a - b)).toEqual([
          0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
        ]);
        for (const failure of refused) {
          expect(failure).toBeInstanceOf(Failure);
          expect(failure.code).toBe("rate_limited");
          expect(failure.headers).toEqual({
            "Retry-After": "45",
            "RateLimit-Limit": "10",
            "RateLimit-Remaining": "0",
            "RateLimit-Reset": "45",
          });
        }
      });

      it("other IPs and other routes keep their own buckets", async () => {
        const license = perMinute(unique("license"), 10);
        const schedule = perMinute(unique("schedule"), 10);
        await Promise.allSettled(Array.from({ length: 50 }, () => enforceLimit(deps, license, ip)));
        await refusal(enforceLimit(deps, license, ip));

        expect(await enforceLimit(deps, license, "198.51.100.23")).toMatchObject({ "RateLimit-Remaining": "9" });
        expect(await enforceLimit(deps, schedule, ip)).toMatchObject({ "RateLimit-Remaining": "9" });
      });

      it("refuses until the window ends and passes after it: Retry-After is the real wait", async () => {
        const rule = perMinute(unique("system-name"), 10);
        for (let i = 0; i < 10; i += 1) await enforceLimit(deps, rule, ip);
        const first = await refusal(enforceLimit(deps, rule, ip));
        expect(first.headers["Retry-After"]).toBe("45");

        vi.setSystemTime(START + 44_499);
        expect((await refusal(enforceLimit(deps, rule, ip))).headers["Retry-After"]).toBe("1");

        vi.setSystemTime(START + 45_000);
        expect(await enforceLimit(deps, rule, ip)).toEqual({
          "RateLimit-Limit": "10",
          "RateLimit-Remaining": "9",
          "RateLimit-Reset": "60",
        });
      });

      it("3 per 24 hours: the fourth is refused until the day window ends at 00:00 UTC", async () => {
        const rule = perDay(unique("onboarding-email"), 3, "closed");
        for (let i = 0; i < 3; i += 1) await enforceLimit(deps, rule, "someone@example.com");
        const refused = await refusal(enforceLimit(deps, rule, "someone@example.com"));
        expect(refused.code).toBe("rate_limited");
        // 11 h 59 min 44.5 s until midnight.
        expect(refused.headers["Retry-After"]).toBe(String(11 * 3600 + 59 * 60 + 45));

        vi.setSystemTime(utcDayStart(START) + 24 * 3600_000 + 1);
        expect(await enforceLimit(deps, rule, "someone@example.com")).toMatchObject({ "RateLimit-Remaining": "2" });
      });
    },
  );
}

describe.skipIf(!haveRedis)(`a plain Redis (REDIS_URL) under @upstash/ratelimit, on a stock redis-server${needsRedis}`, () => {
  let look: Awaited<ReturnType<typeof inspector>>;
  let plain: PlainRedis;
  beforeAll(async () => {
    look = await inspector();
    plain = await plainRedis();
  });
  afterAll(async () => {
    look.destroy();
    await plain.close();
  });

  it("answers as Upstash's REST API does: RESP2 shapes, nil as null, Redis errors as {error}", async () => {
    const { requester } = plain;
    const hash = unique("hash");
    expect(await requester.request({ body: ["get", unique("missing")] })).toEqual({ result: null });
    expect(await requester.request({ body: ["incr", unique("n")] })).toEqual({ result: 1 });
    expect(await requester.request({ body: ["hset", hash, "id", 3] })).toEqual({ result: 1 });
    expect(await requester.request({ body: ["hgetall", hash] })).toEqual({ result: ["id", "3"] });
    expect(await requester.request({ body: ["eval", "return {1, false, 'x'}", 0] })).toEqual({ result: [1, null, "x"] });
    expect(await requester.request({ body: ["nosuchcommand"] })).toEqual({ error: expect.stringMatching(/^ERR unknown command/) });
  });

  it("runs the library's scripts, whose Upstash-only shebang line a stock Redis refuses", async () => {
    const script = "#!lua flags=allow-key-locking\nreturn 7";
    await expect(look.sendCommand(["EVAL", script, "0"])).rejects.toThrow(/Unexpected flag in script shebang/);
    expect(await plain.requester.request({ body: ["eval", script, 0] })).toEqual({ result: 7 });
  });

  it("bills EVALSHA and INCRBY a check, PEXPIRE too on a window's first; the script is sent once, and again after Redis loses it", async () => {
    const store = await createLimiter({ REDIS_URL: redisServer!.url }, silent, Date.now, { bounds: PATIENT });
    try {
      await look.sendCommand(["SCRIPT", "FLUSH"]);
      await look.sendCommand(["CONFIG", "RESETSTAT"]);
      const rule = perMinute(unique("license"), 10);
      for (let i = 0; i < 5; i += 1) await store.limiter.limit(rule, ip);
      // The first EVALSHA finds no script (NOSCRIPT) and the library sends it with EVAL.
      expect(await commandCounts(look)).toEqual({ evalsha: 5, eval: 1, incrby: 5, pexpire: 1 });
      await look.sendCommand(["SCRIPT", "FLUSH"]);
      expect(await store.limiter.limit(rule, ip)).toMatchObject({ success: true, remaining: 4 });
    } finally {
      await store.close();
    }
  });

  it("refusals within the window cost no command: the ephemeral cache answers them", async () => {
    const store = await createLimiter({ REDIS_URL: redisServer!.url }, silent, Date.now, { bounds: PATIENT });
    try {
      const rule = perMinute(unique("license"), 10);
      await awayFromWindowEnd();
      for (let i = 0; i < 11; i += 1) await store.limiter.limit(rule, ip);
      await look.sendCommand(["CONFIG", "RESETSTAT"]);
      const floods = await Promise.all(Array.from({ length: 100 }, () => store.limiter.limit(rule, ip)));
      expect(floods.every((result) => !result.success)).toBe(true);
      expect(await commandCounts(look)).toEqual({});
    } finally {
      await store.close();
    }
  });

  it("counts in the keys earlier releases used, so both share counts during a rolling deploy", async () => {
    const store = await createLimiter({ REDIS_URL: redisServer!.url }, silent, Date.now, { bounds: PATIENT });
    try {
      const rule = perMinute(unique("license"), 10);
      const { reset } = await store.limiter.limit(rule, ip);
      const window = reset / rule.windowMs - 1;
      const key = `cadence:ratelimit:${rule.name}:${ip}:${window}`;
      expect(await look.get(key)).toBe("1");
      const ttl = await look.pTTL(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
    } finally {
      await store.close();
    }
  });
});

describe.skipIf(!haveRedis)(`the Redis connection (REDIS_URL)${needsRedis}`, () => {
  let secured: RedisServer;
  beforeAll(async () => {
    secured = await startRedis({ args: ["--requirepass", "s3cret"] });
  });
  afterAll(async () => {
    await secured.stop();
  });

  it("authenticates and selects the database the URL names", async () => {
    const url = new URL(secured.url);
    url.password = "s3cret";
    url.pathname = "/3";
    const store = await createLimiter({ REDIS_URL: url.href }, silent, Date.now, { bounds: PATIENT });
    const look = await inspector(url.href);
    try {
      const rule = perMinute(unique("license"), 10);
      const { reset } = await store.limiter.limit(rule, ip);
      expect(await look.get(`cadence:ratelimit:${rule.name}:${ip}:${reset / rule.windowMs - 1}`)).toBe("1");
      expect(await look.sendCommand(["DBSIZE"])).toBeGreaterThan(0);
      await look.select(0);
      expect(await look.sendCommand(["DBSIZE"])).toBe(0);
    } finally {
      look.destroy();
      await store.close();
    }
  });

  it("a wrong password is logged once as refused, never with the password, and checks fail at once", async () => {
    const { log, lines } = memoryLogger();
    const url = new URL(secured.url);
    url.password = "wrong-password";
    const store = await createLimiter({ REDIS_URL: url.href }, log, Date.now, { bounds: PATIENT });
    try {
      // At once: the store failed (refused by the server), never "no answer within" a bound, which PATIENT puts past the test's time.
      await expect(store.limiter.limit(perMinute(unique("license"), 10), ip)).rejects.toThrow(new LimiterUnavailable("the store failed"));
      const text = lines.join("\n");
      expect(lines.map((line) => JSON.parse(line))).toContainEqual(expect.objectContaining({ event: "redis_unreachable", reason: "WRONGPASS" }));
      expect(text).not.toContain("wrong-password");
    } finally {
      await store.close();
    }
  });

  it("reconnects by itself when the server comes back, failing at once while it is away, each change logged once", async () => {
    const port = await freePort();
    let server = await startRedis({ port });
    const { log, lines } = memoryLogger();
    const store = await createLimiter({ REDIS_URL: server.url }, log, Date.now, { bounds: PATIENT });
    try {
      expect(await store.limiter.limit(perMinute(unique("license"), 10), ip)).toMatchObject({ success: true });
      await server.stop();
      for (let i = 0; i < 3; i += 1) {
        // At once: the connection is known lost, never "no answer within" a bound (PATIENT's is past the test's time).
        await expect(store.limiter.limit(perMinute(unique("license"), 10), ip)).rejects.toThrow(new LimiterUnavailable("the store failed"));
      }
      server = await startRedis({ port });
      expect(await answeredWithin(store, 5_000)).toMatchObject({ success: true });
      expect(lines.map((line) => JSON.parse(line).event)).toEqual([
        "redis_connected",
        "redis_connection_lost",
        "rate_limit_store_unavailable",
        "redis_connected",
        "rate_limit_store_recovered",
      ]);
    } finally {
      await store.close();
      await server.stop();
    }
  });

  it("a server that stops answering: checks fail at the bound, and pass again once it resumes", async () => {
    const server = await startRedis();
    const { log, lines } = memoryLogger();
    const store = await createLimiter({ REDIS_URL: server.url }, log, Date.now);
    try {
      await store.limiter.limit(perMinute(unique("license"), 10), ip);
      server.pause();
      await expect(store.limiter.limit(perMinute(unique("license"), 10), ip)).rejects.toBeInstanceOf(LimiterUnavailable);
      server.resume();
      expect(await answeredWithin(store, 5_000)).toMatchObject({ success: true });
      const events = lines.map((line) => JSON.parse(line));
      expect(events.map((line) => line.event)).toEqual(["redis_connected", "rate_limit_store_unavailable", "rate_limit_store_recovered"]);
      expect(events[1].reason).toBe("no answer within 500 ms");
    } finally {
      await store.close();
      await server.stop();
    }
  });
});

describe.skipIf(!haveRedis)(`Upstash over HTTP: what the limiter sends to the REST API${needsRedis}`, () => {
  let backend: PlainRedis;
  let look: Awaited<ReturnType<typeof inspector>>;
  let stub: UpstashStub;
  beforeAll(async () => {
    backend = await plainRedis();
    look = await inspector();
    stub = await startUpstashStub(backend.requester, "the-rest-token");
  });
  afterAll(async () => {
    await stub.stop();
    look.destroy();
    await backend.close();
  });

  it("POSTs JSON command arrays with the Bearer token: EVALSHA first, then on NOSCRIPT the script itself", async () => {
    await look.sendCommand(["SCRIPT", "FLUSH"]);
    stub.requests.length = 0;
    const store = await createLimiter({ UPSTASH_REDIS_REST_URL: stub.url, UPSTASH_REDIS_REST_TOKEN: stub.token }, silent, Date.now, { bounds: PATIENT });
    const rule = perMinute(unique("license"), 10);
    const first = await store.limiter.limit(rule, ip);
    const second = await store.limiter.limit(rule, ip);
    expect([first.remaining, second.remaining]).toEqual([9, 8]);

    for (const request of stub.requests) {
      expect(request).toMatchObject({
        method: "POST",
        authorization: "Bearer the-rest-token",
        contentType: "application/json",
        encoding: "base64",
      });
    }
    const [evalsha, evalScript, again, ...rest] = commandsSent(stub);
    const key = expect.stringMatching(new RegExp(`^cadence:ratelimit:${rule.name}:${ip}:\\d+$`));
    // The library's fixed window: the key, then the limit, the window and the increment.
    expect(evalsha).toEqual(["evalsha", expect.stringMatching(/^[0-9a-f]{40}$/), 1, key, 10, 60000, 1]);
    expect(evalScript).toEqual(["eval", expect.stringContaining('redis.call("INCRBY", key, incrementBy)'), 1, key, 10, 60000, 1]);
    expect(again).toEqual(evalsha);
    expect(rest).toEqual([]);
  });

  it("with Upstash 2 ms away, concurrent checks share HTTP calls (auto-pipelining), one EVALSHA each", async () => {
    const distant = await startUpstashStub(backend.requester, "the-rest-token", { delayMs: 2 });
    const store = await createLimiter({ UPSTASH_REDIS_REST_URL: distant.url, UPSTASH_REDIS_REST_TOKEN: distant.token }, silent, Date.now, {
      bounds: PATIENT,
    });
    try {
      const rule = perMinute(unique("license"), 10);
      await store.limiter.limit(rule, "warm-up");
      distant.requests.length = 0;
      await look.sendCommand(["CONFIG", "RESETSTAT"]);
      let passed = 0;
      for (let wave = 0; wave < 20; wave++) {
        const results = await Promise.all(Array.from({ length: 50 }, (_, n) => store.limiter.limit(rule, `10.20.${wave}.${n}`)));
        passed += results.filter((result) => result.success).length;
      }
      expect(passed).toBe(1000);
      expect(commandsSent(distant)).toHaveLength(1000);
      expect(distant.requests.length).toBeLessThanOrEqual(100);
      // What Upstash bills: every command the script runs too.
      expect(await commandCounts(look)).toEqual({ evalsha: 1000, incrby: 1000, pexpire: 1000 });
      console.log(`upstash stub (2 ms): 1000 checks, ${distant.requests.length} HTTP calls, 3000 billed commands`);
    } finally {
      await store.close();
      await distant.stop();
    }
  });

  /**
   * Billed commands of 12 checks of one client on a new rule (10 pass, 2 refused), with `options`
   * on, once the background work each check hands to the edge runtime's `waitUntil` has settled.
   */
  async function commandsOfTwelveChecks(options: Record<string, boolean>, before: (rule: string) => Promise<void> = async () => {}) {
    const background: Promise<unknown>[] = [];
    const store = await createLimiter(
      { UPSTASH_REDIS_REST_URL: stub.url, UPSTASH_REDIS_REST_TOKEN: stub.token, ...options },
      silent,
      Date.now,
      { keepAlive: (work) => background.push(work), bounds: PATIENT },
    );
    try {
      const rule = perMinute(unique("license"), 10);
      await before(rule.name);
      await store.limiter.limit(perMinute(unique("warm-up"), 10), ip);
      await Promise.all(background.splice(0));
      await awayFromWindowEnd();
      await look.sendCommand(["CONFIG", "RESETSTAT"]);
      const results = [];
      for (let i = 0; i < 12; i += 1) results.push(await store.limiter.limit(rule, ip));
      expect(results.filter((result) => result.success)).toHaveLength(10);
      // Only analytics and deny lists leave work to wait for.
      expect(background).toHaveLength(Object.values(options).some(Boolean) ? 12 : 0);
      await Promise.all(background);
      return await commandCounts(look);
    } finally {
      await store.close();
    }
  }

  it("by default a check costs EVALSHA and INCRBY, PEXPIRE on a window's first, and a refusal the ephemeral cache answers none", async () => {
    // The 11th check is counted by the script and refused; the 12th is refused from memory.
    expect(await commandsOfTwelveChecks({})).toEqual({ evalsha: 11, incrby: 11, pexpire: 1 });
  });

  it("analytics (UPSTASH_RATELIMIT_ANALYTICS) add one ZINCRBY to every check, refusals from memory included", async () => {
    expect(await commandsOfTwelveChecks({ UPSTASH_RATELIMIT_ANALYTICS: true })).toEqual({ evalsha: 11, incrby: 11, pexpire: 1, zincrby: 12 });
  });

  it("deny lists (UPSTASH_RATELIMIT_DENY_LISTS) add EVAL, SMISMEMBER and TTL to every check, and refuse a denied client with 429", async () => {
    // The status the Upstash console sets when its public IP deny list is switched off: no daily download from outside.
    const ipListOff = (rule: string) => look.set(`cadence:ratelimit:${rule}:ipDenyListStatus`, "disabled").then(() => {});
    expect(await commandsOfTwelveChecks({ UPSTASH_RATELIMIT_DENY_LISTS: true }, ipListOff)).toEqual({
      evalsha: 11,
      incrby: 11,
      pexpire: 1,
      eval: 12,
      smismember: 12,
      ttl: 12,
    });

    const store = await createLimiter({ UPSTASH_REDIS_REST_URL: stub.url, UPSTASH_REDIS_REST_TOKEN: stub.token, UPSTASH_RATELIMIT_DENY_LISTS: true }, silent, Date.now, {
      bounds: PATIENT,
    });
    try {
      const rule = perMinute(unique("license"), 10);
      await ipListOff(rule.name);
      await look.sAdd(`cadence:ratelimit:${rule.name}:denyList:all`, "198.51.100.66");
      const refused = await refusal(enforceLimit({ limiter: store.limiter, now: Date.now }, rule, "198.51.100.66"));
      expect(refused.code).toBe("rate_limited");
      expect(Number(refused.headers["Retry-After"])).toBeGreaterThanOrEqual(1);
      expect(await enforceLimit({ limiter: store.limiter, now: Date.now }, rule, ip)).toMatchObject({ "RateLimit-Remaining": "9" });
    } finally {
      await store.close();
    }
  });

  it("a wrong token is a store failure: kiosk rules fail open, onboarding rules fail closed with 503", async () => {
    const store = await createLimiter({ UPSTASH_REDIS_REST_URL: stub.url, UPSTASH_REDIS_REST_TOKEN: "wrong" }, silent, Date.now);
    const deps = { limiter: store.limiter, now: Date.now };
    expect(await enforceLimit(deps, perMinute(unique("license"), 10), ip)).toEqual({});
    const refused = await refusal(enforceLimit(deps, perMinute(unique("onboarding"), 5, "closed"), ip));
    expect(refused.code).toBe("rate_limit_unavailable");
    expect(refused.headers).toEqual({ "Retry-After": "10" });
  });
});

describe("a store that is down or slow never hangs a request", () => {
  /** A TCP server that accepts connections and never answers: a stalled Redis or Upstash. */
  let stalled: Server;
  let stalledPort: number;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    stalled = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => stalled.listen(0, "127.0.0.1", resolve));
    stalledPort = (stalled.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => stalled.close(resolve));
  });

  async function expectBothFailModes(store: LimiterStore) {
    const deps = { limiter: store.limiter, now: Date.now };
    try {
      expect(await settlesSoon(enforceLimit(deps, perMinute(unique("schedule"), 10), ip))).toEqual({});
      const refused = await settlesSoon(refusal(enforceLimit(deps, perMinute(unique("onboarding"), 5, "closed"), ip)));
      expect(refused.code).toBe("rate_limit_unavailable");
    } finally {
      await store.close();
    }
  }

  it("Redis on a closed port: kiosk rules let requests through, onboarding rules answer 503", async () => {
    const closedPort = await freePort();
    await expectBothFailModes(await createLimiter({ REDIS_URL: `redis://127.0.0.1:${closedPort}` }, silent, Date.now));
  });

  it("Redis that accepts connections and never answers: the same, within the bound", async () => {
    await expectBothFailModes(await createLimiter({ REDIS_URL: `redis://127.0.0.1:${stalledPort}` }, silent, Date.now));
  });

  it("Upstash that never answers: the library's timeout (an answer of success) is taken as unavailable, the same within the bound", async () => {
    await expectBothFailModes(
      await createLimiter({ UPSTASH_REDIS_REST_URL: `http://127.0.0.1:${stalledPort}`, UPSTASH_REDIS_REST_TOKEN: "token" }, silent, Date.now),
    );
  });
});

describe("rate limits over HTTP (memory store)", () => {
  let db: Database;
  let queries = 0;
  beforeAll(async () => {
    const database = await freshDatabase();
    const real = database.db;
    db = {
      query: (text, params) => {
        queries += 1;
        return real.query(text, params);
      },
      script: (text) => real.script(text),
      close: () => database.drop(),
    };
  });
  afterAll(async () => {
    await db.close();
  });

  function app(overrides: Parameters<typeof testApp>[1] = {}) {
    const clock = testClock(START);
    return { clock, ...testApp(db, { now: clock.now, ...overrides }) };
  }
  const from = (client: string, init: RequestInit = {}): RequestInit => ({
    ...init,
    headers: { ...(init.headers as Record<string, string>), "x-forwarded-for": client },
  });
  const badCredentials: RequestInit = {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ license_key: "DEMO-0000-0000-0001", email_address: "not-the-owner@example.com" }),
  };

  /** The contract's rate-limited kiosk routes, each asked something it refuses after looking at the database. */
  const kioskRoutes = [
    { route: "POST /api/v2/license", path: "/api/v2/license", init: badCredentials, status: 400 },
    {
      route: "GET /api/v2/schedule",
      path: "/api/v2/schedule?email=nobody@example.com&licenseKey=DEMO-0000-0000-0001",
      init: {},
      status: 400,
      alongside: true,
    },
    {
      route: "GET /api/v2/licenses/{licenseKey}/schedule",
      path: "/api/v2/licenses/NONE-0000-0000-0000/schedule",
      init: {},
      status: 404,
      alongside: true,
    },
    {
      route: "PUT /api/v2/licenses/{licenseKey}/system-name",
      path: "/api/v2/licenses/NONE-0000-0000-0000/system-name",
      init: { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ systemName: "Lobby" }) },
      status: 404,
    },
  ];

  for (const { route, path, init, status, alongside } of kioskRoutes) {
    describe(route, () => {
      const rule = alongside
        ? "10 requests per minute per client IP, checked while the database is read: the 11th gets 429, its read discarded, and a client already refused starts no read"
        : "10 requests per minute per client IP, checked before credentials and the database: the 11th gets 429";
      it(rule, async () => {
        const { request } = app();
        const answers: Response[] = [];
        for (let i = 0; i < 10; i += 1) answers.push(await request(path, from(ip, init)));
        expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(status));
        if (alongside) expect((await request(path, from(ip, init))).status).toBe(429);

        const before = queries;
        const over = await Promise.all(Array.from({ length: 5 }, () => request(path, from(ip, init))));
        expect(over.map((answer) => answer.status)).toEqual(Array(5).fill(429));
        expect(queries).toBe(before);
        expect(await over[0].json()).toEqual({ message: "too many requests" });
        expect(over[0].headers.get("retry-after")).toBe("45");
      });

      it("answers within the limit carry RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset", async () => {
        const { request } = app();
        const answer = await request(path, from(ip, init));
        expect(answer.status).toBe(status);
        expect(answer.headers.get("ratelimit-limit")).toBe("10");
        expect(answer.headers.get("ratelimit-remaining")).toBe("9");
        expect(answer.headers.get("ratelimit-reset")).toBe("45");
        expect(answer.headers.get("retry-after")).toBeNull();
      });

      it("with the store down, the route fails open: the request is served, without RateLimit-* headers", async () => {
        const { request } = app({ limiter: downLimiter });
        const answers: Response[] = [];
        for (let i = 0; i < 12; i += 1) answers.push(await request(path, from(ip, init)));
        expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(status));
        expect(answers[11].headers.get("ratelimit-limit")).toBeNull();
      });
    });
  }

  describe("the schedule reads: the limit checked while the database is read", () => {
    const schedule = "/api/v2/licenses/DEMO-0000-0000-0001/schedule";

    it("a refused request records no sighting: the 429 is the answer whatever the read found", async () => {
      const sightings: string[] = [];
      const { request } = app({ sightings: { saw: (key) => sightings.push(key) } });
      for (let i = 0; i < 10; i += 1) expect((await request(schedule, from(ip))).status).toBe(200);
      const refused = await Promise.all(Array.from({ length: 3 }, () => request(schedule, from(ip))));
      expect(refused.map((answer) => answer.status)).toEqual([429, 429, 429]);
      expect(await refused[0].json()).toEqual({ message: "too many requests" });
      expect(refused[0].headers.get("etag")).toBeNull();
      expect(sightings).toHaveLength(10);
    });

    async function flood(limiter: RateLimiter) {
      const { request } = testApp(db, { limiter });
      await awayFromWindowEnd();
      const before = queries;
      const first = await Promise.all(Array.from({ length: 50 }, () => request(schedule, from(ip))));
      const readsOfFirst = queries - before;
      const second = await Promise.all(Array.from({ length: 100 }, () => request(schedule, from(ip))));
      const statuses = [...first, ...second].map((answer) => answer.status);
      expect(statuses.filter((status) => status === 200)).toHaveLength(10);
      expect(statuses.filter((status) => status === 429)).toHaveLength(140);
      return { readsOfFirst, readsOfSecond: queries - before - readsOfFirst };
    }

    it("a flood from one address, memory store: at most one read past the window's 10, none once its refusal is known", async () => {
      const { readsOfFirst, readsOfSecond } = await flood(memoryLimiter(Date.now));
      expect(readsOfFirst).toBeLessThanOrEqual(11);
      expect(readsOfSecond).toBe(0);
    });

    it.skipIf(!haveRedis)(`a flood from one address, Redis store: the reads in flight before its first refusal, none after${needsRedis}`, async () => {
      const store = await createLimiter({ REDIS_URL: redisServer!.url }, silent, Date.now, { bounds: PATIENT });
      try {
        const { readsOfFirst, readsOfSecond } = await flood(store.limiter);
        expect(readsOfFirst).toBeLessThanOrEqual(50);
        expect(readsOfSecond).toBe(0);
      } finally {
        await store.close();
      }
    });
  });

  describe("failed pairings, one count over the routes that pair a key with an e-mail (not the spec's)", () => {
    const pairing = (email: string): Array<{ path: string; init: RequestInit }> => [
      { path: "/api/v2/proclamations", init: { headers: { "x-license-key": "DEMO-0000-0000-0001", "x-email": email } } },
      { path: `/api/v2/schedule?email=${email}&licenseKey=DEMO-0000-0000-0001`, init: {} },
      {
        path: "/api/v2/license",
        init: { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ license_key: "DEMO-0000-0000-0001", email_address: email }) },
      },
    ];

    it("10 failed pairings per minute per client, over all three routes: the 11th failure gets 429 with Retry-After, a valid pair still 200", async () => {
      const { request } = app();
      const failures: number[] = [];
      for (let i = 0; i < 12; i += 1) {
        const { path, init } = pairing(`nobody${i}@example.com`)[i % 3];
        failures.push((await request(path, from(ip, init))).status);
      }
      expect(failures).toEqual([...Array(10).fill(400), 429, 429]);
      const refused = await request(...(Object.values(pairing("other@example.com")[0]) as [string, RequestInit]));
      expect(refused.status).toBe(400); // another client keeps its own count
      const over = await request(pairing("nobody@example.com")[0].path, from(ip, pairing("nobody@example.com")[0].init));
      expect(await over.json()).toEqual({ message: "too many requests" });
      expect(over.headers.get("retry-after")).toBe("45");
      for (const { path, init } of pairing("demo@example.com")) expect((await request(path, from(ip, init))).status).toBe(200);
    });

    it("a valid pair is never counted: a kiosk's own reads never bring its address near the limit", async () => {
      const { request } = app();
      for (let i = 0; i < 30; i += 1) {
        expect((await request("/api/v2/proclamations", from(ip, pairing("demo@example.com")[0].init))).status).toBe(200);
      }
      for (let i = 0; i < 10; i += 1) expect((await request(pairing(`x${i}@example.com`)[0].path, from(ip, pairing(`x${i}@example.com`)[0].init))).status).toBe(400);
    });
  });

  describe("the limited kiosk routes together", () => {
    it("429: JSON {message}, Retry-After in whole seconds, and the RateLimit-* headers", async () => {
      const { request } = app();
      for (let i = 0; i < 10; i += 1) await request("/api/v2/license", from(ip, badCredentials));
      const answer = await request("/api/v2/license", from(ip, badCredentials));
      expect(answer.status).toBe(429);
      expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await answer.json()).toEqual({ message: "too many requests" });
      expect(answer.headers.get("retry-after")).toBe("45");
      expect(answer.headers.get("ratelimit-limit")).toBe("10");
      expect(answer.headers.get("ratelimit-remaining")).toBe("0");
      expect(answer.headers.get("ratelimit-reset")).toBe("45");
    });

    it("pass again once the window has ended", async () => {
      const { request, clock } = app();
      for (let i = 0; i < 11; i += 1) await request("/api/v2/license", from(ip, badCredentials));
      clock.advance(45_000);
      expect((await request("/api/v2/license", from(ip, badCredentials))).status).toBe(400);
    });

    it("a bucket per route: a kiosk polling its schedule can still validate its license", async () => {
      const { request } = app();
      for (let i = 0; i < 15; i += 1) await request("/api/v2/licenses/DEMO-0000-0000-0001/schedule", from(ip));
      expect((await request("/api/v2/licenses/DEMO-0000-0000-0001/schedule", from(ip))).status).toBe(429);
      const validation = await request(
        "/api/v2/license",
        from(ip, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ license_key: "DEMO-0000-0000-0001", email_address: "demo@example.com" }),
        }),
      );
      expect(validation.status).toBe(200);
    });

    it("a bucket per client IP: the first X-Forwarded-For address behind a trusted proxy", async () => {
      const { request } = app();
      for (let i = 0; i < 10; i += 1) await request("/api/v2/license", from(`${ip}, 10.0.0.1`, badCredentials));
      expect((await request("/api/v2/license", from(`${ip}, 10.0.0.2`, badCredentials))).status).toBe(429);
      expect((await request("/api/v2/license", from("198.51.100.23, 10.0.0.1", badCredentials))).status).toBe(400);
    });

    it("without a trusted proxy, X-Forwarded-For is ignored: the socket peer is the client", async () => {
      const { app: bare } = app({ clientIpSource: false });
      const statuses: number[] = [];
      for (let i = 0; i < 11; i += 1) {
        const answer = await bare.request("/api/v2/license", from(`192.0.2.${i}`, badCredentials), { remoteAddr: "127.0.0.9" });
        statuses.push(answer.status);
      }
      expect(statuses).toEqual([...Array(10).fill(400), 429]);
    });
  });

  describe("POST /api/v2/automations/create/account", () => {
    const unsigned: RequestInit = {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "new@example.com" }),
    };

    it("5 requests per minute per client IP, checked before the signature: the 6th gets 429", async () => {
      const { request } = app();
      const statuses: number[] = [];
      for (let i = 0; i < 7; i += 1) statuses.push((await request("/api/v2/automations/create/account", from(ip, unsigned))).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    });

    it("with the store down, it fails closed: 503 {message} with Retry-After", async () => {
      const { request } = app({ limiter: downLimiter });
      const answer = await request("/api/v2/automations/create/account", from(ip, unsigned));
      expect(answer.status).toBe(503);
      expect(await answer.json()).toEqual({ message: "rate limiting is unavailable, try again shortly" });
      expect(answer.headers.get("retry-after")).toBe("10");
    });
  });
});
