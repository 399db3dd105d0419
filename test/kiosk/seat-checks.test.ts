import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { DatabaseUnavailable } from "../../functions/app/db/unavailable.ts";
import { checkSeats } from "../../functions/app/kiosk/seat-checks.ts";
import { kioskSightings, NETWORKS_KEPT_PER_KEY } from "../../functions/app/kiosk/sightings.ts";
import { memoryLogger, testApp } from "../support/app.ts";
import { testClock } from "../support/clock.ts";
import { freshDatabase, type TestDatabase } from "../support/database.ts";

// Each test plays a timeline of kiosk calls through the real sightings writer (30 s per key, as in
// production), runs the seat-check pass every minute, and reads what staff and holders read.
const MINUTE = 60_000;
const DEMO_ACCOUNT = "a0000000-0000-4000-8000-000000000001";
const DEMO_USER = "e0000000-0000-4000-8000-000000000001";
const OTHER_USER = "e0000000-0000-4000-8000-000000000002";

/** One call: when (ms from the timeline's start), which key, from where, and the name it wrote. */
interface Call {
  at: number;
  key: string;
  ip: string;
  name?: string;
}

/** A kiosk polling `key` every `everyMs` from `from` to `until`, from the address `ip(i)` at its i-th poll. */
function polls(key: string, ip: (i: number) => string, from: number, until: number, everyMs = MINUTE): Call[] {
  const calls: Call[] = [];
  for (let at = from, i = 0; at < until; at += everyMs, i += 1) calls.push({ at, key, ip: ip(i) });
  return calls;
}

/** A kiosk starting: it validates, writes its name and reads its schedule, at `at`. */
function boot(key: string, ip: string, at: number, name: string): Call[] {
  return [{ at, key, ip }, { at: at + 1_000, key, ip, name }, { at: at + 2_000, key, ip }];
}

let database: TestDatabase;
let sql: postgres.Sql;
let serial = 0;

beforeAll(async () => {
  database = await freshDatabase();
  sql = postgres(database.url, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await sql.end();
  await database.drop();
});

/** New keys of the demo account, fresh for each test. */
async function newKeys(count: number): Promise<string[]> {
  const keys = Array.from({ length: count }, () => `SEAT-0000-0000-${String((serial += 1)).padStart(4, "0")}`);
  await sql`insert into public.license_keys (key, account_id, email) select k, ${DEMO_ACCOUNT}, 'demo@example.com' from unnest(${keys}::text[]) as k`;
  return keys;
}

/**
 * Plays `calls` in time order, writing sightings as an instance does and passing every minute;
 * returns the clock, the timeline's start and the statements the sightings writer sent.
 */
async function play(calls: Call[]) {
  const clock = testClock();
  const start = clock.now();
  const statements: string[] = [];
  const db: Database = { ...database.db, query: (text, params, options) => (statements.push(text), database.db.query(text, params, options)) };
  const sightings = kioskSightings({ db, now: clock.now, log: memoryLogger().log, flushEveryMs: 3_600_000 });
  const ports = { db: database.db, now: clock.now, log: memoryLogger().log };
  let nextPass = start + MINUTE;
  for (const call of [...calls].sort((a, b) => a.at - b.at)) {
    while (start + call.at >= nextPass) {
      clock.advance(nextPass - clock.now());
      await sightings.flush();
      await checkSeats(ports);
      nextPass += MINUTE;
    }
    clock.advance(start + call.at - clock.now());
    sightings.saw(call.key, call.ip, undefined, call.name);
    await sightings.flush();
  }
  await sightings.close();
  await checkSeats(ports);
  return { clock, start, statements };
}

const rulesOf = async (key: string) =>
  (await sql`select rules from public.seat_suspicions where license_key = ${key}`)[0]?.rules as string[] | undefined;

describe("seat checks: a license key used by two kiosks is flagged, from the calls kiosks already make", () => {
  it("interleaved_networks: two kiosks on two networks polling one key are flagged within minutes", async () => {
    const [key] = await newKeys(1);
    const { start } = await play([...polls(key, () => "198.51.100.7", 0, 10 * MINUTE), ...polls(key, () => "203.0.113.9", 4 * MINUTE + 30_000, 10 * MINUTE)]);
    expect(await rulesOf(key)).toEqual(["interleaved_networks"]);
    const [flagged] = await sql`select (extract(epoch from first_flagged_at) * 1000)::float8 as ms from public.seat_suspicions where license_key = ${key}`;
    expect(flagged.ms - (start + 4 * MINUTE + 30_000)).toBeLessThanOrEqual(3 * MINUTE);
    const [copy] = await sql`select license_key, rules, networks from public.suspected_copies where license_key = ${key}`;
    expect(copy.networks.map((n: { network: string }) => n.network).sort()).toEqual(["198.51.100.7/32", "203.0.113.9/32"]);
    for (const network of copy.networks) {
      expect(network.calls).toBeGreaterThan(3);
      expect(network.returns).toBeGreaterThanOrEqual(2);
      expect(Date.parse(network.lastSeenAt)).toBeGreaterThan(Date.parse(network.firstSeenAt));
    }
    const [status] = await sql`select suspected_copy from public.kiosk_status where license_key = ${key}`;
    expect(status.suspected_copy).toBe(true);
  });

  it("interleaved_networks: two kiosks on two IPv6 /64s are flagged", async () => {
    const [key] = await newKeys(1);
    await play([...polls(key, (i) => `2001:db8:1:1::${i + 1}`, 0, 10 * MINUTE), ...polls(key, (i) => `2001:db8:2:2::${i + 1}`, 30_000, 10 * MINUTE)]);
    expect(await rulesOf(key)).toEqual(["interleaved_networks"]);
  });

  it("interleaved_families: a kiosk on IPv6 and a copy on IPv4 are flagged within 15 minutes of the second device, without waiting for poll_rate's hour", async () => {
    const [key] = await newKeys(1);
    const second = 3 * MINUTE + 20_000;
    const { start } = await play([
      ...polls(key, (i) => `2001:db8:9:9:${((i * 7919) % 0x10000).toString(16)}::${i.toString(16)}`, 0, 20 * MINUTE),
      ...polls(key, () => "203.0.113.120", second, 20 * MINUTE),
    ]);
    expect(await rulesOf(key)).toEqual(["interleaved_families"]);
    const [flagged] = await sql`select (extract(epoch from first_flagged_at) * 1000)::float8 as ms from public.seat_suspicions where license_key = ${key}`;
    expect(flagged.ms - (start + second)).toBeLessThanOrEqual(15 * MINUTE);
    const [copy] = await sql`select networks from public.suspected_copies where license_key = ${key}`;
    expect(copy.networks.map((n: { network: string; returns: number }) => [n.network, n.returns]).sort())
      .toEqual([["2001:db8:9:9::/64", 0], ["203.0.113.120/32", 0]]);
    for (const network of copy.networks) expect(network.returnsAcrossFamilies).toBeGreaterThan(5);
  });

  it("poll_rate: two kiosks behind one address polling one key are flagged once an hour of their calls is complete", async () => {
    const [key] = await newKeys(1);
    await play([...polls(key, () => "198.51.100.20", 0, 125 * MINUTE), ...polls(key, () => "198.51.100.20", 30_000, 125 * MINUTE)]);
    expect(await rulesOf(key)).toEqual(["poll_rate"]);
  });

  it("poll_rate sees two kiosks' calls whatever their families: a copy across families is flagged by it too, once the first hour of its calls is complete", async () => {
    const [key] = await newKeys(1);
    await play([...polls(key, (i) => `2001:db8:a:a::${(i + 1).toString(16)}`, 0, 62 * MINUTE), ...polls(key, () => "203.0.113.130", 30_000, 62 * MINUTE)]);
    expect(await rulesOf(key)).toEqual(["interleaved_families", "poll_rate"]);
  });

  it("system_name_flips: two kiosks writing their own names at each start are flagged", async () => {
    const [key] = await newKeys(1);
    const calls = [0, 1, 2].flatMap((hour) => [
      ...boot(key, "198.51.100.30", hour * 60 * MINUTE, "Lobby"),
      ...boot(key, "198.51.100.30", hour * 60 * MINUTE + 5 * MINUTE, "Lobby 2"),
    ]);
    await play(calls);
    expect(await rulesOf(key)).toEqual(["system_name_flips"]);
  });

  it("adds no database write to a kiosk request: a copied key's calls through the API send the routes' statements, and the evidence goes in the sightings write", async () => {
    const [key] = await newKeys(1);
    const clock = testClock();
    const onRequests: string[] = [];
    const byWriter: string[] = [];
    let sink = onRequests;
    const db: Database = { ...database.db, query: (text, params, options) => (sink.push(text), database.db.query(text, params, options)) };
    const sightings = kioskSightings({ db, now: clock.now, log: memoryLogger().log, flushEveryMs: 3_600_000, perKeyMs: 0 });
    const { request } = testApp(db, { now: clock.now, sightings });
    for (const [i, ip] of ["198.51.100.121", "2001:db8:12:1::5", "203.0.113.121", "198.51.100.121"].entries()) {
      const init = { headers: { "content-type": "application/json", "x-forwarded-for": ip } };
      expect((await request("/api/v2/license", { ...init, method: "POST", body: JSON.stringify({ license_key: key, email_address: "demo@example.com" }) })).status).toBe(200);
      expect((await request(`/api/v2/licenses/${key}/system-name`, { ...init, method: "PUT", body: JSON.stringify({ systemName: `Lobby ${i % 2}` }) })).status).toBe(200);
      expect((await request(`/api/v2/licenses/${key}/schedule`, init)).status).toBe(200);
      clock.advance(30_000);
    }
    sink = byWriter;
    await sightings.close();
    expect(onRequests.length).toBeGreaterThan(0);
    expect(onRequests.filter((text) => /kiosk_networks|kiosk_sightings|seat_|record_kiosk_sightings/.test(text))).toEqual([]);
    expect(byWriter.map((text) => text.trim().slice(0, 40))).toEqual(["select cadence.record_kiosk_sightings($1"]);
    const [seen] = await sql`select calls_this_hour, system_name_changes from public.kiosk_sightings where license_key = ${key}`;
    expect(seen).toEqual({ calls_this_hour: 12, system_name_changes: 3 });
    expect(await sql`select network::text from public.kiosk_networks where license_key = ${key} order by network`)
      .toEqual([{ network: "198.51.100.121/32" }, { network: "2001:db8:12:1::/64" }, { network: "203.0.113.121/32" }]);
  });

  it("the evidence rides on the sightings writes: every statement the writer sends is one record_kiosk_sightings", async () => {
    const [key] = await newKeys(1);
    const { statements } = await play([...polls(key, () => "198.51.100.8", 0, 5 * MINUTE), ...polls(key, () => "203.0.113.8", 30_000, 5 * MINUTE)]);
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.filter((text) => !/^select cadence\.record_kiosk_sightings\(/.test(text.trim()))).toEqual([]);
  });


  it("a key called from a new address on every request keeps at most NETWORKS_KEPT_PER_KEY networks a write, and counts every call", async () => {
    const [key] = await newKeys(1);
    const clock = testClock();
    const sightings = kioskSightings({ db: database.db, now: clock.now, log: memoryLogger().log, flushEveryMs: 3_600_000, perKeyMs: 0 });
    for (let i = 0; i < 1_000; i++) sightings.saw(key, `198.51.${100 + (i >> 8)}.${i & 255}`);
    await sightings.close();
    const [{ networks }] = await sql`select count(*)::int as networks from public.kiosk_networks where license_key = ${key}`;
    expect(networks).toBe(NETWORKS_KEPT_PER_KEY);
    const [seen] = await sql`select calls_this_hour from public.kiosk_sightings where license_key = ${key}`;
    expect(seen).toEqual({ calls_this_hour: 1_000 });
  });

  it("a write the database missed (unavailable) keeps its evidence for the next, counts and all", async () => {
    const [key] = await newKeys(1);
    const clock = testClock();
    let failures = 1;
    const db: Database = {
      ...database.db,
      query: (text, params, options) =>
        failures-- > 0 ? Promise.reject(new DatabaseUnavailable("paused by the test")) : database.db.query(text, params, options),
    };
    const sightings = kioskSightings({ db, now: clock.now, log: memoryLogger().log, flushEveryMs: 3_600_000, perKeyMs: 0 });
    sightings.saw(key, "198.51.100.9", undefined, "Lobby");
    clock.advance(30_000);
    sightings.saw(key, "203.0.113.19");
    await sightings.flush();
    clock.advance(30_000);
    sightings.saw(key, "198.51.100.9", undefined, "Hall");
    await sightings.close();
    const networks = await sql`select network::text, calls::int from public.kiosk_networks where license_key = ${key} order by network`;
    expect(networks).toEqual([{ network: "198.51.100.9/32", calls: 2 }, { network: "203.0.113.19/32", calls: 1 }]);
    const [seen] = await sql`select calls_this_hour, system_name_written, system_name_changes from public.kiosk_sightings where license_key = ${key}`;
    expect(seen).toEqual({ calls_this_hour: 3, system_name_written: "Hall", system_name_changes: 1 });
  });
});

describe("seat checks: no false flag for honest fleets", () => {
  it("a venue whose address changes (DHCP renewals, a failover to a mobile link and back) is not flagged", async () => {
    const [renewed, failover] = await newKeys(2);
    await play([
      ...polls(renewed, (i) => `198.51.100.${40 + Math.floor(i / 20)}`, 0, 90 * MINUTE),
      ...polls(failover, (i) => (i >= 30 && i < 40 ? "203.0.113.50" : "198.51.100.50"), 0, 90 * MINUTE),
    ]);
    expect(await rulesOf(renewed)).toBeUndefined();
    expect(await rulesOf(failover)).toBeUndefined();
    const [networks] = await sql`select count(*)::int as n from public.kiosk_networks where license_key = ${renewed}`;
    expect(networks.n).toBe(5);
  });

  it("IPv6 privacy addresses rotating inside one /64 are one network, not flagged", async () => {
    const [key] = await newKeys(1);
    await play(polls(key, (i) => `2001:db8:5:5:${((i * 7919) % 0x10000).toString(16)}:1:2:${i.toString(16)}`, 0, 30 * MINUTE));
    expect(await rulesOf(key)).toBeUndefined();
    // One network all along: the key never needs evidence rows.
    expect(await sql`select network::text from public.kiosk_networks where license_key = ${key}`).toEqual([]);
  });

  it("many kiosks behind one venue address, each with its own key, are not flagged", async () => {
    const keys = await newKeys(12);
    await play(keys.flatMap((key, i) => polls(key, () => "198.51.100.60", i * 4_000, 20 * MINUTE)));
    expect(await sql`select license_key from public.seat_suspicions where license_key = any(${keys})`).toEqual([]);
  });

  it("a kiosk restarted six times in an hour is not flagged", async () => {
    const [key] = await newKeys(1);
    const restarts = [5, 15, 25, 35, 45, 55].flatMap((minute) => boot(key, "198.51.100.70", minute * MINUTE + 20_000, "Lobby"));
    await play([...polls(key, () => "198.51.100.70", 0, 130 * MINUTE), ...restarts]);
    expect(await rulesOf(key)).toBeUndefined();
  });

  it("a dual-stack kiosk alternating between its venue's IPv4 address and IPv6 /64 is not flagged: families are not compared", async () => {
    const [key] = await newKeys(1);
    // Every 10 s: several calls of each family in one write, as well as across writes.
    await play(polls(key, (i) => (i % 2 ? "198.51.100.75" : `2001:db8:7:7::${i + 1}`), 0, 20 * MINUTE, 10_000));
    expect(await rulesOf(key)).toBeUndefined();
  });

  it("a dual-stack kiosk switching families between polls, restarted six times in an hour with its family switching mid-start, is not flagged", async () => {
    const [key] = await newKeys(1);
    const ipOf = (v6: boolean, i: number) => (v6 ? `2001:db8:8:8::${(i + 1).toString(16)}` : "198.51.100.85");
    // The worst a start can do: 50 s after a poll, its first call on the other family, its second
    // back on the poll's family (a return across families), its third on the other again; its next
    // poll, 60 s later, back on the second call's family (another return). Then polls alternate.
    const calls: Call[] = [];
    let v6 = false;
    for (let at = 0, i = 0; at < 65 * MINUTE; i += 1) {
      calls.push({ at, key, ip: ipOf(v6, i) });
      if ([5, 15, 25, 35, 45, 55].includes(i)) {
        const boot = at + 50_000;
        calls.push({ at: boot, key, ip: ipOf(!v6, i) }, { at: boot + 1_000, key, ip: ipOf(v6, i), name: "Lobby" }, { at: boot + 2_000, key, ip: ipOf(!v6, i) });
        at = boot + 2_000 + MINUTE;
      } else {
        at += MINUTE;
        v6 = !v6;
      }
    }
    await play(calls);
    expect(await rulesOf(key)).toBeUndefined();
    const [evidence] = await sql`select sum(family_returns_this_hour + family_returns_last_hour)::int as returns from public.kiosk_networks where license_key = ${key}`;
    // Its returns across families are real, more than returns_to_flag (3): compared as networks of
    // one family are, it would have been flagged.
    expect(evidence.returns).toBeGreaterThan(3);
  });

  it("a readdressed kiosk's evidence goes a day later: its key is a single-network key again", async () => {
    const [key] = await newKeys(1);
    const { clock } = await play(polls(key, (i) => (i < 5 ? "198.51.100.76" : "198.51.100.77"), 0, 10 * MINUTE));
    expect(await sql`select network::text from public.kiosk_networks where license_key = ${key} order by network`)
      .toEqual([{ network: "198.51.100.76/32" }, { network: "198.51.100.77/32" }]);
    clock.advance(25 * 60 * MINUTE);
    await checkSeats({ db: database.db, now: clock.now, log: memoryLogger().log });
    expect(await sql`select network from public.kiosk_networks where license_key = ${key}`).toEqual([]);
  });

  it("a kiosk renamed once by its holder is not flagged", async () => {
    const [key] = await newKeys(1);
    await play([...boot(key, "198.51.100.80", 0, "Lobby"), ...boot(key, "198.51.100.80", 10 * MINUTE, "Front desk"), ...boot(key, "198.51.100.80", 20 * MINUTE, "Front desk")]);
    expect(await rulesOf(key)).toBeUndefined();
  });
});

describe("seat checks: the daily digest e-mail to staff", () => {
  it("is off by default; with seat_watch.digest_to set, one e-mail a day lists the keys flagged since the last", async () => {
    const [key] = await newKeys(1);
    const outbox = async () => (await sql`select recipient, subject, text_body from public.email_outbox where recipient = 'staff@example.com'`);
    const { clock } = await play([...polls(key, () => "198.51.100.90", 0, 6 * MINUTE), ...polls(key, () => "203.0.113.90", 30_000, 6 * MINUTE)]);
    expect(await rulesOf(key)).toEqual(["interleaved_networks"]);
    expect(await outbox()).toEqual([]);
    await sql`update public.seat_watch set digest_to = 'staff@example.com'`;
    try {
      const ports = { db: database.db, now: clock.now, log: memoryLogger().log };
      expect((await checkSeats(ports)).digest).toBe(true);
      const [mail] = await outbox();
      expect(mail.subject).toMatch(/possibly copied/);
      expect(mail.text_body).toContain(key);
      expect(mail.text_body).toContain("interleaved_networks");
      clock.advance(23 * 60 * MINUTE);
      expect((await checkSeats(ports)).digest).toBe(false);
      expect(await outbox()).toHaveLength(1);
    } finally {
      await sql`update public.seat_watch set digest_to = null, last_digest_at = null`;
    }
  });
});

describe("seat checks through Supabase's Data API: account holders see their own keys' flags only", () => {
  /** Runs `query` as the Data API runs a request: a transaction as `role`, with the JWT claims of `user`. */
  async function asRole(role: "anon" | "authenticated", query: string, user = DEMO_USER) {
    const claims = role === "anon" ? { role } : { sub: user, role };
    return sql.begin(async (tx) => {
      await tx.unsafe(`set local role ${role}`);
      await tx`select set_config('request.jwt.claims', ${JSON.stringify(claims)}, true)`;
      return [...await tx.unsafe(query)];
    });
  }
  let key: string;

  beforeAll(async () => {
    [key] = await newKeys(1);
    await sql`insert into auth.users (id, email) values (${DEMO_USER}, 'demo@example.com'), (${OTHER_USER}, 'other@example.com') on conflict do nothing`;
    await sql`update public.accounts set auth_user_id = ${DEMO_USER} where email = 'demo@example.com'`;
    await sql`update public.accounts set auth_user_id = ${OTHER_USER} where email = 'other@example.com'`;
    await play([...polls(key, () => "198.51.100.110", 0, 6 * MINUTE), ...polls(key, () => "203.0.113.110", 30_000, 6 * MINUTE)]);
  });

  it("the holder of the key sees its flag in kiosk_status and its rules in seat_suspicions", async () => {
    expect(await asRole("authenticated", `select suspected_copy from public.kiosk_status where license_key = '${key}'`)).toEqual([{ suspected_copy: true }]);
    expect(await asRole("authenticated", `select license_key, rules from public.seat_suspicions where license_key = '${key}'`))
      .toEqual([{ license_key: key, rules: ["interleaved_networks"] }]);
  });

  it("another account's holder sees neither, even asking for it", async () => {
    expect(await asRole("authenticated", `select * from public.kiosk_status where license_key = '${key}'`, OTHER_USER)).toEqual([]);
    expect(await asRole("authenticated", `select license_key from public.seat_suspicions where license_key = '${key}'`, OTHER_USER)).toEqual([]);
  });

  it("holders read no evidence (networks) and no settings; anon reads nothing", async () => {
    for (const relation of ["public.suspected_copies", "public.kiosk_networks", "public.seat_watch"]) {
      await expect(asRole("authenticated", `select * from ${relation}`)).rejects.toMatchObject({ code: "42501" });
    }
    for (const relation of ["public.seat_suspicions", "public.suspected_copies", "public.kiosk_networks"]) {
      await expect(asRole("anon", `select * from ${relation}`)).rejects.toMatchObject({ code: "42501" });
    }
  });
});
