import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLimiter, type LimiterStore } from "../../functions/app/rate-limit/create-limiter.ts";
import { memoryLimiter } from "../../functions/app/rate-limit/memory.ts";
import { openPlainRedis } from "../../functions/app/rate-limit/plain-redis.ts";

import { RULES } from "../../functions/app/rate-limit/rules.ts";
import { venueAllowances, type VenueAllowances } from "../../functions/app/venues/venue-allowances.ts";
import { memoryLogger, testApp } from "../support/app.ts";
import { utcDayStart } from "../support/clock.ts";
import { scopedDatabase } from "../support/database.ts";
import { PATIENT } from "../support/patient-store.ts";
import { type RedisServer, redisServerAvailable, startRedis } from "../support/redis.ts";
import { startUpstashStub } from "../support/upstash-stub.ts";


// Venue addresses (issue 32): many kiosks behind one address get kiosks x the contract's per-address
// limit on each kiosk route; every other address keeps the contract's limits. A registration only adds
// (issue 39): no address inside one ever has less than without it. The demo data: account
// demo has keys 1 and 2 active and key 3 inactive; account other has key 4.

const users = { demo: "e0000000-0000-4000-8000-000000000001", other: "e0000000-0000-4000-8000-000000000002" } as const;
const account = { demo: "a0000000-0000-4000-8000-000000000001", other: "a0000000-0000-4000-8000-000000000002" } as const;
/** Where the demo account's key 1 was last seen, and key 4 (other). */
const seen = { demo: "203.0.113.7", other: "198.51.100.9" } as const;

type Who = keyof typeof users | "staff";
const rollback = new Error("rollback");

const database = scopedDatabase();
let sql: postgres.Sql;

/** As the Data API runs a holder's request (role authenticated, JWT claims), or as staff in the dashboard (postgres); rolled back unless `commit`. */
async function as<T>(who: Who, work: (tx: postgres.TransactionSql) => Promise<T>, options: { commit?: boolean } = {}): Promise<T> {
  let result: T | undefined;
  try {
    await sql.begin(async (tx) => {
      if (who !== "staff") {
        await tx.unsafe("set local role authenticated");
        await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: users[who], role: "authenticated" })}, true)`;
      }
      result = await work(tx);
      if (!options.commit) throw rollback;
    });
  } catch (error) {
    if (error !== rollback) throw error;
  }
  return result as T;
}

const register = (who: Who, accountId: string, network: string, kiosks: number, options: { commit?: boolean } = {}) =>
  as(who, (tx) => tx.unsafe("insert into public.venue_addresses (account_id, network, kiosks) values ($1, $2, $3) returning id, network::text, kiosks", [accountId, network, kiosks]), options);

beforeAll(async () => {
  sql = postgres(database.url, { max: 1, onnotice: () => {} });
  await sql`update public.accounts set auth_user_id = ${users.demo} where id = ${account.demo}`;
  await sql`update public.accounts set auth_user_id = ${users.other} where id = ${account.other}`;
  await sql`select cadence.record_kiosk_polls(array['DEMO-0000-0000-0001', 'DEMO-0000-0000-0004'], array[now(), now()], array[${seen.demo}, ${seen.other}]::inet[], array[null, null]::text[])`;
});
afterAll(async () => {
  await sql?.end();
});

describe("venue addresses: account holders register their own through the Data API", () => {
  it("a holder registers an address one of its kiosks was seen from, and reads it back", async () => {
    const rows = await as("demo", async (tx) => {
      await tx.unsafe("insert into public.venue_addresses (account_id, network, kiosks) values ($1, $2, 2)", [account.demo, seen.demo]);
      return [...await tx.unsafe("select network::text, kiosks, created_by, updated_by from public.venue_addresses")];
    });
    expect(rows).toEqual([{ network: `${seen.demo}/32`, kiosks: 2, created_by: `account holder ${users.demo}`, updated_by: `account holder ${users.demo}` }]);
  });

  it("refuses an address no kiosk of the account has called from, saying so", async () => {
    await expect(register("demo", account.demo, "192.0.2.7", 1)).rejects.toMatchObject({
      code: "23514",
      message: expect.stringMatching(/^venue address 192\.0\.2\.7\/32: no kiosk of this account has called from it in the last 24 hours/),
    });
    // Another account's kiosk was seen there: still not this account's.
    await expect(register("demo", account.demo, seen.other, 1)).rejects.toMatchObject({ code: "23514" });
  });

  it("refuses an address the account's kiosk last called from more than 24 hours ago", async () => {
    await as("staff", async (tx) => {
      await tx.unsafe("update public.kiosk_sightings set last_seen_at = now() - interval '25 hours' where license_key = 'DEMO-0000-0000-0001'");
      await tx.unsafe("set local role authenticated");
      await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: users.demo, role: "authenticated" })}, true)`;
      await expect(tx.unsafe("insert into public.venue_addresses (account_id, network, kiosks) values ($1, $2, 1)", [account.demo, seen.demo]))
        .rejects.toMatchObject({ code: "23514", constraint_name: "venue_address_was_seen_from_the_account" });
    });
  });

  it("refuses a range from an account holder, even around its own kiosk's address: ranges are for staff", async () => {
    for (const network of ["203.0.113.0/28", "203.0.113.0/24", "2001:db8:aa::/48", "2001:db8:aa:1::7/128"]) {
      await expect(register("demo", account.demo, network, 1), network).rejects.toMatchObject({
        code: "23514",
        constraint_name: "venue_address_of_an_account_holder_is_one_address",
        message: expect.stringContaining("an account holder registers one address (an IPv4 /32 or an IPv6 /64)"),
      });
    }
  });

  it("never registers for another account, nor sees another account's registrations", async () => {
    await expect(register("demo", account.other, seen.other, 1)).rejects.toMatchObject({
      code: "42501",
      message: 'new row violates row-level security policy for table "venue_addresses"',
    });
    await register("staff", account.other, `${seen.other}/32`, 1, { commit: true });
    try {
      expect(await as("demo", (tx) => tx.unsafe("select id from public.venue_addresses"))).toHaveLength(0);
      expect(await as("demo", (tx) => tx.unsafe("update public.venue_addresses set kiosks = 1 returning id"))).toHaveLength(0);
      expect(await as("demo", (tx) => tx.unsafe("delete from public.venue_addresses returning id"))).toHaveLength(0);
      expect(await as("other", (tx) => tx.unsafe("select network::text from public.venue_addresses"))).toEqual([{ network: `${seen.other}/32` }]);
    } finally {
      await sql`delete from public.venue_addresses`;
    }
  });

  it("lets the holder change its kiosks and delete it, but never the account or the audit columns", async () => {
    await as("demo", async (tx) => {
      const [{ id }] = await tx.unsafe("insert into public.venue_addresses (account_id, network, kiosks) values ($1, $2, 1) returning id", [account.demo, seen.demo]);
      expect(await tx.unsafe("update public.venue_addresses set kiosks = 2 where id = $1 returning kiosks", [id])).toEqual([{ kiosks: 2 }]);
      await expect(tx.savepoint((sp) => sp.unsafe("update public.venue_addresses set account_id = $1", [account.other]))).rejects.toMatchObject({ code: "42501" });
    });
    await expect(as("demo", (tx) => tx.unsafe("update public.venue_addresses set created_by = 'someone'"))).rejects.toMatchObject({ code: "42501" });
  });

  it("staff register a venue before any of its kiosks has called", async () => {
    expect(await register("staff", account.demo, "192.0.2.0/28", 2)).toEqual([expect.objectContaining({ network: "192.0.2.0/28", kiosks: 2 })]);
  });
});

// Issue 49: the rules' trigger runs before row-level security's WITH CHECK, with its owner's rights.
// A holder's row for another account must meet one refusal, whatever that account holds, or its
// errors tell that account's networks, active keys and where its kiosks call from.
describe("venue addresses: no error speaks of another account", () => {
  /** Row-level security's refusal of a new row, as Postgres words it. */
  const policyRefusal = { code: "42501", message: 'new row violates row-level security policy for table "venue_addresses"' };
  /** What a refusal shows: the Data API answers a holder with code, message, details and hint; the constraint too, to be strict. */
  const shown = (error: postgres.PostgresError) => ({ code: error.code, message: error.message, detail: error.detail, hint: error.hint, constraint_name: error.constraint_name });

  /** `who`'s insert after `setup` ran as staff in the same transaction, all rolled back: "inserted", or the refusal as shown. */
  const attempt = (who: keyof typeof users, setup: string[], accountId: string, network: string, kiosks: number) =>
    as("staff", async (tx) => {
      for (const statement of setup) await tx.unsafe(statement);
      await tx.unsafe("set local role authenticated");
      await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: users[who], role: "authenticated" })}, true)`;
      return tx.unsafe("insert into public.venue_addresses (account_id, network, kiosks) values ($1, $2, $3)", [accountId, network, kiosks])
        .then(() => "inserted", shown);
    });

  it("never tells whether another account registered an overlapping network; the account's own holder is told", async () => {
    const holds = { a: [`insert into public.venue_addresses (account_id, network, kiosks) values ('${account.other}', '198.51.100.0/24', 1)`], nothing: [] };
    for (const [state, setup] of Object.entries(holds)) {
      expect(await attempt("demo", setup, account.other, seen.other, 1), state).toEqual(policyRefusal);
    }
    expect(await attempt("other", holds.a, account.other, seen.other, 1)).toMatchObject({
      code: "23P01",
      message: `venue address ${seen.other}/32 overlaps 198.51.100.0/24, already registered to this account: change that registration's kiosks instead`,
    });
    expect(await attempt("demo", [], account.demo, seen.demo, 1)).toBe("inserted");
  });

  it("never tells how many active keys another account has; the account's own holder is told", async () => {
    const activeKeys = {
      one: [],
      none: ["update public.license_keys set active = false where key = 'DEMO-0000-0000-0004'"],
      two: [`insert into public.license_keys (key, account_id, email) values ('DEMO-0000-0000-0009', '${account.other}', 'other@example.com')`],
    };
    for (const [state, setup] of Object.entries(activeKeys)) {
      for (const kiosks of [1, 2, 3]) expect(await attempt("demo", setup, account.other, seen.other, kiosks), `${state}, ${kiosks}`).toEqual(policyRefusal);
    }
    expect(await attempt("other", activeKeys.one, account.other, seen.other, 2)).toMatchObject({
      code: "23514",
      message: expect.stringMatching(/^venue addresses of this account would hold 2 kiosks, but it has 1 active license keys/),
    });
    expect(await attempt("other", activeKeys.two, account.other, seen.other, 2)).toBe("inserted");
  });

  it("never tells where another account's kiosks called from in the last 24 hours; the account's own holder is told", async () => {
    const calledFrom = {
      now: [],
      "25 hours ago": ["update public.kiosk_sightings set last_seen_at = now() - interval '25 hours' where license_key = 'DEMO-0000-0000-0004'"],
      never: ["delete from public.kiosk_sightings where license_key = 'DEMO-0000-0000-0004'"],
    };
    for (const [state, setup] of Object.entries(calledFrom)) {
      for (const network of [seen.other, "192.0.2.7"]) expect(await attempt("demo", setup, account.other, network, 1), `${state}, ${network}`).toEqual(policyRefusal);
    }
    expect(await attempt("other", calledFrom["25 hours ago"], account.other, seen.other, 1)).toMatchObject({
      code: "23514",
      constraint_name: "venue_address_was_seen_from_the_account",
    });
    expect(await attempt("other", calledFrom.now, account.other, seen.other, 1)).toBe("inserted");
  });

  it("refuses before anything reads or locks that account: one that does not exist, or whose row staff hold, meets the same refusal at once", async () => {
    expect(await attempt("demo", [], crypto.randomUUID(), seen.demo, 1)).toEqual(policyRefusal);
    const staff = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      await staff.begin(async (held) => {
        await held`select from public.accounts where id = ${account.other} for update`;
        // Were the rules' lock on the account's row taken first, this would wait and end in lock_not_available.
        expect(await attempt("demo", ["set local lock_timeout = '2s'"], account.other, seen.other, 1)).toEqual(policyRefusal);
        // The account's own holder does wait for it: the rules serialise an account's registrations.
        expect(await attempt("other", ["set local lock_timeout = '100ms'"], account.other, seen.other, 1)).toMatchObject({ code: "55P03" });
      });
    } finally {
      await staff.end();
    }
  });

  it("an update never reaches another account's rows, nor moves a row there, whatever the grants", async () => {
    await register("staff", account.other, `${seen.other}/32`, 1, { commit: true });
    try {
      // Values every rule would refuse: no rule runs, the row is not the holder's to see.
      expect(await as("demo", (tx) => tx.unsafe("update public.venue_addresses set kiosks = 50, network = '192.0.2.0/24' returning id"))).toHaveLength(0);
      await register("demo", account.demo, seen.demo, 1, { commit: true });
      for (const target of [account.other, crypto.randomUUID()]) {
        await expect(as("demo", (tx) => tx.unsafe("update public.venue_addresses set account_id = $1", [target]))).rejects.toMatchObject({
          code: "42501",
          message: "permission denied for table venue_addresses",
        });
        // Were account_id granted by mistake, the move would still meet the policy's refusal first.
        const moved = await as("staff", async (tx) => {
          await tx.unsafe("grant update (account_id) on public.venue_addresses to authenticated");
          await tx.unsafe("set local role authenticated");
          await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: users.demo, role: "authenticated" })}, true)`;
          return tx.unsafe("update public.venue_addresses set account_id = $1, kiosks = 50", [target]).then(() => "moved", shown);
        });
        expect(moved, target).toEqual(policyRefusal);
      }
    } finally {
      await sql`delete from public.venue_addresses`;
    }
  });
});

describe("venue addresses: entries refused, with a message that says why", () => {
  it("refuses /0 and any range wider than an IPv4 /24 or an IPv6 /48", async () => {
    for (const network of ["0.0.0.0/0", "203.0.112.0/23", "::/0", "2001:db8::/47"]) {
      await expect(register("staff", account.demo, network, 1), network).rejects.toMatchObject({
        code: "23514",
        constraint_name: "venue_address_is_at_most_an_ipv4_24_or_ipv6_48",
      });
    }
    expect(await register("staff", account.demo, "2001:db8:1::/48", 1)).toHaveLength(1);
  });

  it("refuses a range with host bits set, as Postgres reads a cidr", async () => {
    await expect(register("staff", account.demo, "203.0.113.7/24", 1)).rejects.toMatchObject({ code: "22P02", detail: "Value has bits set to right of mask." });
  });

  it("refuses a range that overlaps another of the same account, naming it; another account's may overlap, each adding its own", async () => {
    await register("staff", account.other, "198.51.100.0/24", 1, { commit: true });
    try {
      await expect(register("staff", account.other, "198.51.100.9/32", 1)).rejects.toMatchObject({
        code: "23P01",
        constraint_name: "venue_addresses_of_an_account_do_not_overlap",
        message: "venue address 198.51.100.9/32 overlaps 198.51.100.0/24, already registered to this account: change that registration's kiosks instead",
      });
      await as("staff", async (tx) => {
        await tx.unsafe("insert into public.venue_addresses (account_id, network, kiosks) values ($1, '198.51.100.0/24', 1), ($1, '203.0.113.0/28', 1)", [account.demo]);
        expect([...await tx.unsafe("select network, kiosks from cadence.venue_allowances(10) order by network")]).toEqual([
          { network: "198.51.100.0/24", kiosks: 2 },
          { network: "203.0.113.0/28", kiosks: 1 },
        ]);
      });
    } finally {
      await sql`delete from public.venue_addresses`;
    }
  });

  it("refuses more kiosks than the account has active license keys, across its registrations", async () => {
    await expect(register("staff", account.demo, "203.0.113.0/28", 3)).rejects.toMatchObject({
      code: "23514",
      message: expect.stringMatching(/^venue addresses of this account would hold 3 kiosks, but it has 2 active license keys/),
    });
    await as("staff", async (tx) => {
      await tx.unsafe("insert into public.venue_addresses (account_id, network, kiosks) values ($1, '203.0.113.0/28', 1)", [account.demo]);
      await expect(tx.savepoint((sp) => sp.unsafe("insert into public.venue_addresses (account_id, network, kiosks) values ($1, '192.0.2.0/28', 2)", [account.demo])))
        .rejects.toMatchObject({ message: expect.stringContaining("would hold 3 kiosks") });
    });
  });

  it("serialises an account's registrations on its row, so two concurrent overlapping ones cannot both pass", async () => {
    const other = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      let second!: Promise<unknown>;
      await sql.begin(async (tx) => {
        await tx`insert into public.venue_addresses (account_id, network, kiosks) values (${account.demo}, '192.0.2.0/28', 1)`;
        second = other`insert into public.venue_addresses (account_id, network, kiosks) values (${account.demo}, '192.0.2.8/29', 1)`.execute()
          .then(() => "inserted", (error: unknown) => error);
        // The second waits on the account's row until the first commits, then sees it.
        await expect.poll(async () => (await tx`select count(*)::int as n from pg_locks where not granted`)[0].n, { timeout: 30_000 }).toBeGreaterThan(0);
      });
      expect(await second).toMatchObject({ code: "23P01", constraint_name: "venue_addresses_of_an_account_do_not_overlap" });
    } finally {
      await other.end();
      await sql`delete from public.venue_addresses`;
    }
  });
});

describe("venue addresses: every change dated and attributable", () => {
  it("records each insert, update and delete with when and who: the holder's Auth user, or the staff login", async () => {
    await sql`delete from public.venue_address_changes`;
    await as("demo", async (tx) => {
      const [{ id }] = await tx.unsafe("insert into public.venue_addresses (account_id, network, kiosks) values ($1, $2, 1) returning id", [account.demo, seen.demo]);
      await tx.unsafe("update public.venue_addresses set kiosks = 2 where id = $1", [id]);
      await tx.unsafe("delete from public.venue_addresses where id = $1", [id]);
    }, { commit: true });
    const changes = await sql`select change, network::text, kiosks, changed_by, changed_at is not null as dated from public.venue_address_changes order by id`;
    await sql`delete from public.venue_address_changes`;
    expect(changes.map((row) => ({ ...row }))).toEqual([
      { change: "insert", network: `${seen.demo}/32`, kiosks: 1, changed_by: `account holder ${users.demo}`, dated: true },
      { change: "update", network: `${seen.demo}/32`, kiosks: 2, changed_by: `account holder ${users.demo}`, dated: true },
      { change: "delete", network: `${seen.demo}/32`, kiosks: 2, changed_by: `account holder ${users.demo}`, dated: true },
    ]);
    const [staff] = await as("staff", async (tx) => {
      await tx.unsafe("insert into public.venue_addresses (account_id, network, kiosks) values ($1, '192.0.2.0/28', 1)", [account.demo]);
      return [...await tx.unsafe("select changed_by from public.venue_address_changes")];
    });
    expect(staff.changed_by).toMatch(/^role \w+$/);
  });

  it("keeps the audit trail from account holders: no privilege on it", async () => {
    await expect(as("demo", (tx) => tx.unsafe("select * from public.venue_address_changes"))).rejects.toMatchObject({ code: "42501" });
  });
});

describe("kiosk routes: a registration adds kiosks x the spec's allowance; no address has less than the spec's", () => {
  /** 12:00:15 UTC today: every request below falls in one minute window. */
  const clock = () => utcDayStart() + (12 * 3600 + 15) * 1000;
  let venues: VenueAllowances;

  beforeAll(async () => {
    await sql`delete from public.venue_addresses`;
    await sql`insert into public.venue_addresses (account_id, network, kiosks) values (${account.demo}, '203.0.113.0/28', 2)`;
    venues = venueAllowances({ db: database.db, log: memoryLogger().log });
    await venues.firstLoad;
  });
  afterAll(async () => {
    venues.close();
    await sql`delete from public.venue_addresses`;
  });

  async function burst(app: ReturnType<typeof testApp>, path: string, ips: string[]) {
    const answers = [];
    for (const ip of ips) answers.push(await app.request(path, { headers: { "x-forwarded-for": ip } }));
    return answers;
  }

  it("a range of 2 kiosks: each address its own 10 a minute, then 20 the range's addresses share; the next refused", async () => {
    const app = testApp(database.db, { limiter: memoryLimiter(clock), venues });
    const answers = await burst(app, "/api/v2/licenses/DEMO-0000-0000-0001/schedule", Array(31).fill("203.0.113.3"));
    expect(answers.slice(0, 30).map((a) => a.status)).toEqual(Array(30).fill(200));
    expect(answers[9].headers.get("ratelimit-limit")).toBe("10");
    expect(answers[29].headers.get("ratelimit-limit")).toBe("20");
    expect(answers[30].status).toBe(429);
    expect(answers[30].headers.get("retry-after")).toMatch(/^\d+$/);
    // The range's share is spent, but another address in it still has its own 10.
    const neighbour = await burst(app, "/api/v2/licenses/DEMO-0000-0000-0001/schedule", Array(11).fill("203.0.113.4"));
    expect(neighbour.map((a) => a.status)).toEqual([...Array(10).fill(200), 429]);
  });

  it("a single address of 2 kiosks: its own bucket at 20 a minute, the 21st refused with RateLimit-Limit 20", async () => {
    // Two accounts behind one address, a kiosk each: their registrations add up to one of 2 kiosks.
    await sql`update public.venue_addresses set kiosks = 1 where account_id = ${account.demo}`;
    await sql`insert into public.venue_addresses (account_id, network, kiosks) values (${account.other}, '198.51.100.20', 1)`;
    await sql`insert into public.venue_addresses (account_id, network, kiosks) values (${account.demo}, '198.51.100.20', 1)`;
    await venues.refresh();
    try {
      const app = testApp(database.db, { limiter: memoryLimiter(clock), venues });
      const answers = await burst(app, "/api/v2/licenses/DEMO-0000-0000-0001/schedule", Array(21).fill("198.51.100.20"));
      expect(answers.slice(0, 20).map((a) => a.status)).toEqual(Array(20).fill(200));
      expect(answers[0].headers.get("ratelimit-limit")).toBe("20");
      expect(answers[20].status).toBe(429);
    } finally {
      await sql`delete from public.venue_addresses where network = '198.51.100.20'`;
      await sql`update public.venue_addresses set kiosks = 2 where account_id = ${account.demo}`;
      await venues.refresh();
    }
  });

  it("an address nobody registered keeps exactly the spec's 10 a minute", async () => {
    const app = testApp(database.db, { limiter: memoryLimiter(clock), venues });
    const answers = await burst(app, "/api/v2/licenses/DEMO-0000-0000-0001/schedule", Array(11).fill("203.0.113.16"));
    expect(answers.slice(0, 10).map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(answers[10].status).toBe(429);
    expect(answers[0].headers.get("ratelimit-limit")).toBe("10");
  });

  it("onboarding is no kiosk route: a venue address keeps its 5 a minute", () => {
    expect(RULES.onboardingPerIp.perKiosk).toBeUndefined();
    expect([RULES.license, RULES.systemName, RULES.licenseSchedule, RULES.legacySchedule].every((rule) => rule.perKiosk)).toBe(true);
  });

  it("a change reaches the instance at its next read; a deleted registration falls back to the spec's limit", async () => {
    expect(venues.lookup("203.0.113.5")).toEqual([{ identifier: "203.0.113.0/28", kiosks: 2 }]);
    await sql`delete from public.venue_addresses`;
    await sql`insert into public.venue_addresses (account_id, network, kiosks) values (${account.demo}, '203.0.113.5/32', 1)`;
    expect(venues.lookup("203.0.113.5")[0].kiosks).toBe(2);
    await venues.refresh();
    expect(venues.lookup("203.0.113.5")).toEqual([{ identifier: "203.0.113.5", kiosks: 1 }]);
    expect(venues.lookup("203.0.113.6")).toEqual([]);
  });

  it("finds every IPv6 venue holding an address by its /48 to /128 prefix, most specific first, in any spelling of the client address", async () => {
    await sql`insert into public.venue_addresses (account_id, network, kiosks) values (${account.other}, '2001:db8:aa::/48', 1)`;
    await venues.refresh();
    await sql`insert into public.venue_addresses (account_id, network, kiosks) values (${account.demo}, '2001:db8:aa:1::/64', 1)`;
    await venues.refresh();
    expect(venues.lookup("2001:db8:aa:1::7")).toEqual([{ identifier: "2001:db8:aa:1::/64", kiosks: 1 }, { identifier: "2001:db8:aa::/48", kiosks: 1 }]);
    expect(venues.lookup("2001:0db8:00aa:0000:0000:0000:0000:0001")).toEqual([{ identifier: "2001:db8:aa::/48", kiosks: 1 }]);
    expect(venues.lookup("2001:db8:ab::1")).toEqual([]);
  });

  it("on an instance that has not read the registrations yet, a venue over the spec's limit waits for that read and is not refused", async () => {
    await sql`delete from public.venue_addresses`;
    await sql`insert into public.venue_addresses (account_id, network, kiosks) values (${account.demo}, '203.0.113.0/28', 2)`;
    // The first read is held until 10 requests have passed at the contract's limit.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const db = { ...database.db, query: async (...args: Parameters<typeof database.db.query>) => (await held, database.db.query(...args)) } as typeof database.db;
    const cold = venueAllowances({ db, log: memoryLogger().log });
    try {
      const app = testApp(database.db, { limiter: memoryLimiter(clock), venues: cold });
      const path = "/api/v2/licenses/DEMO-0000-0000-0001/schedule";
      const first = await burst(app, path, Array(10).fill("203.0.113.9"));
      expect(first.map((a) => a.status)).toEqual(Array(10).fill(200));
      expect(cold.loaded).toBe(false);
      setTimeout(release, 50);
      const eleventh = await app.request(path, { headers: { "x-forwarded-for": "203.0.113.9" } });
      expect(eleventh.status).toBe(200);
      expect(eleventh.headers.get("ratelimit-limit")).toBe("20");
    } finally {
      cold.close();
    }
  });
});

const haveRedis = redisServerAvailable();
describe.skipIf(!haveRedis)("kiosk routes on @upstash/ratelimit (REDIS_URL): a venue's allowance shares the address's count", () => {
  let redis: RedisServer;
  let store: LimiterStore;
  beforeAll(async () => {
    redis = await startRedis();
    store = await createLimiter({ REDIS_URL: redis.url }, memoryLogger().log, Date.now, { bounds: PATIENT });
  });
  afterAll(async () => {
    await store?.close();
    await redis?.stop();
  });

  it("requests counted at the spec's 10 carry over when the address is registered for 2 kiosks mid-window", async () => {
    const rule = { ...RULES.license, name: `license-${crypto.randomUUID().slice(0, 8)}` };
    const ip = "203.0.113.44";
    for (let n = 0; n < 5; n++) await store.limiter.limit(rule, ip);
    const registered = await store.limiter.limit({ ...rule, limit: 20 }, ip);
    expect(registered).toMatchObject({ success: true, limit: 20, remaining: 14 });
    for (let n = 0; n < 14; n++) await store.limiter.limit({ ...rule, limit: 20 }, ip);
    expect(await store.limiter.limit({ ...rule, limit: 20 }, ip)).toMatchObject({ success: false });
    // The contract's instance was never refused: its ephemeral cache knows nothing of the venue's refusal.
    expect(store.limiter.isRefused(rule, ip)).toBe(false);
    expect(store.limiter.isRefused({ ...rule, limit: 20 }, ip)).toBe(true);
  });
});

// The squatting of issue 39, on every store. The squatter: account "other", one active key, whose
// kiosk was seen once from 2001:db8:5a:1::7. It claimed the surrounding /48 for 1 kiosk, and every
// other customer in that /48 then shared its one bucket of 10 a minute.
const squat = { seen: "2001:db8:5a:1::7", range: "2001:db8:5a::/48" } as const;
/** Kiosks of other customers, in five other /64s of the range; the demo account's is a real venue there. */
const neighbours = ["2001:db8:5a:2::1", "2001:db8:5a:3::1", "2001:db8:5a:4::1", "2001:db8:5a:5::1", "2001:db8:5a:6::1"];
const venueSeen = neighbours[3];

const stores: { name: string; requiresRedis: boolean; open(redis?: RedisServer): Promise<LimiterStore> }[] = [
  { name: "memory", requiresRedis: false, open: () => createLimiter({}, memoryLogger().log, Date.now) },
  { name: "Redis (REDIS_URL)", requiresRedis: true, open: (redis) => createLimiter({ REDIS_URL: redis!.url }, memoryLogger().log, Date.now, { bounds: PATIENT }) },
  {
    name: "Upstash (its REST API, stubbed over a real Redis)",
    requiresRedis: true,
    async open(redis) {
      const log = memoryLogger().log;
      const backend = await openPlainRedis(redis!.url, { commandTimeoutMs: PATIENT.checkMs, connectWaitMs: PATIENT.connectMs, log });
      const stub = await startUpstashStub(backend.requester);
      const store = await createLimiter({ UPSTASH_REDIS_REST_URL: stub.url, UPSTASH_REDIS_REST_TOKEN: stub.token }, log, Date.now, { bounds: PATIENT });
      return { ...store, close: async () => (await store.close(), await stub.stop(), await backend.close()) };
    },
  },
];

describe("venue squatting: an account holder cannot claim a range, and a range claimed anyway lowers nobody's limit", () => {
  let venues: VenueAllowances;
  beforeAll(async () => {
    await sql`delete from public.venue_addresses`;
    await sql`select cadence.record_kiosk_polls(array['DEMO-0000-0000-0004', 'DEMO-0000-0000-0001'], array[now(), now()], array[${squat.seen}, ${venueSeen}]::inet[], array[null, null]::text[])`;
  });
  afterAll(async () => {
    venues?.close();
    await sql`delete from public.venue_addresses`;
  });

  it("the squatter's claim of the surrounding /48 is refused: an account holder registers one address", async () => {
    await expect(register("other", account.other, squat.range, 1)).rejects.toMatchObject({ constraint_name: "venue_address_of_an_account_holder_is_one_address" });
  });

  it("a real venue inside a range another account holds still registers its address", async () => {
    // The range as it could have been stored before the rule (or by staff).
    await register("staff", account.other, squat.range, 1, { commit: true });
    await register("demo", account.demo, "2001:db8:5a:5::/64", 2, { commit: true });
    venues = venueAllowances({ db: database.db, log: memoryLogger().log });
    await venues.firstLoad;
    expect(venues.lookup(venueSeen)).toEqual([{ identifier: "2001:db8:5a:5::/64", kiosks: 2 }, { identifier: squat.range, kiosks: 1 }]);
  });

  for (const subject of stores) {
    describe.skipIf(subject.requiresRedis && !haveRedis)(subject.name, () => {
      let redis: RedisServer | undefined;
      let store: LimiterStore;
      beforeAll(async () => {
        if (subject.requiresRedis) redis = await startRedis();
        store = await subject.open(redis);
      });
      afterAll(async () => {
        await store?.close();
        await redis?.stop();
      });

      const poll = (app: ReturnType<typeof testApp>, ip: string, key: string) =>
        app.request(`/api/v2/licenses/${key}/schedule`, { headers: { "x-forwarded-for": ip } });

      it("after the squatter's 10 polls, kiosks in five other /64s of its range answer 200 on 5 of 5 polls each", async () => {
        const app = testApp(database.db, { limiter: store.limiter, venues });
        const squatter = [];
        for (let n = 0; n < 10; n++) squatter.push((await poll(app, squat.seen, "DEMO-0000-0000-0004")).status);
        expect(squatter).toEqual(Array(10).fill(200));
        for (const ip of neighbours) {
          const statuses = [];
          for (let n = 0; n < 5; n++) statuses.push((await poll(app, ip, "DEMO-0000-0000-0002")).status);
          expect(statuses, ip).toEqual(Array(5).fill(200));
        }
      });

      it("the real venue inside the range keeps its registration's 20 a minute in its own bucket", async () => {
        const app = testApp(database.db, { limiter: store.limiter, venues });
        const answer = await poll(app, "2001:db8:5a:5::2", "DEMO-0000-0000-0001");
        expect(answer.status).toBe(200);
        expect(answer.headers.get("ratelimit-limit")).toBe("20");
      });
    });
  }
});
