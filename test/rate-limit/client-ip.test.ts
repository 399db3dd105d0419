import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../functions/app/config.ts";
import { clientIp, clientIpSource, describeClientIp, everyAddressWarning, UNKNOWN_CLIENT } from "../../functions/app/http/client-ip.ts";
import { TrustedProxies } from "../../functions/app/http/trusted-proxies.ts";
import { testApp } from "../support/app.ts";
import { testClock } from "../support/clock.ts";
import { scopedDatabase } from "../support/database.ts";
import { type RunningServer, startServer } from "../support/server.ts";

const OFF_SUPABASE = { onSupabase: false, edgeRuntime: false };
/** The source of a start with these variables, off Supabase, as openRuntime computes it. */
const sourceOf = (env: Record<string, string>, place = OFF_SUPABASE) => clientIpSource(parseConfig(env), place);
/** CLIENT_IP_HEADER=name with TRUSTED_PROXIES unset: believed from loopback. */
const header = (name: string) => sourceOf({ CLIENT_IP_HEADER: name });
const requestWith = (headers: Record<string, string>) => new Request("http://cadence.test/api/v2/license", { headers });
/** A loopback peer: the shipped HAProxy's place, trusted by default. */
const PEER = { remoteAddr: "127.0.0.9" };

/** A clock that stands still: every request of a test falls in one minute window, however slow the machine. */
const clock = testClock();

describe("where the client IP comes from (clientIpSource, from the configuration)", () => {
  it("is CLIENT_IP_HEADER when it is set, on Supabase or not", () => {
    for (const onSupabase of [true, false]) {
      expect(describeClientIp(sourceOf({ CLIENT_IP_HEADER: "x-real-ip" }, { onSupabase, edgeRuntime: false }))).toBe("x-real-ip from 127.0.0.0/8,::1");
    }
  });

  it("is CF-Connecting-IP on Supabase when CLIENT_IP_HEADER is unset", () => {
    expect(describeClientIp(sourceOf({}, { onSupabase: true, edgeRuntime: false }))).toBe("cf-connecting-ip from 127.0.0.0/8,::1");
  });

  it("is X-Forwarded-For's first entry with TRUST_PROXY=true, else the socket peer", () => {
    expect(describeClientIp(sourceOf({ TRUST_PROXY: "true" }))).toBe("x-forwarded-for from 127.0.0.0/8,::1");
    expect(sourceOf({})).toBe(false);
    expect(describeClientIp(sourceOf({}))).toBe("socket peer");
  });

  it("believes the header from TRUSTED_PROXIES, loopback unless set (the shipped HAProxy runs beside the workers)", () => {
    expect(describeClientIp(sourceOf({ CLIENT_IP_HEADER: "x-real-ip", TRUSTED_PROXIES: "10.0.0.5, 2001:db8::/64" }))).toBe("x-real-ip from 10.0.0.5, 2001:db8::/64");
  });

  it("believes it from any peer on Supabase's Edge Runtime, where the platform's gateway is every request's peer", () => {
    const onEdge = { onSupabase: true, edgeRuntime: true };
    expect(describeClientIp(sourceOf({}, onEdge))).toBe("cf-connecting-ip from any peer");
    expect(describeClientIp(sourceOf({ TRUSTED_PROXIES: "10.0.0.5" }, onEdge))).toBe("cf-connecting-ip from any peer");
  });
});

describe("whose header is believed: a socket peer in TRUSTED_PROXIES (clientIp)", () => {
  const forged = requestWith({ "x-real-ip": "8.8.8.8" });

  it("from any other peer the peer is the client, in its one spelling, whatever the header says", () => {
    const source = header("x-real-ip");
    expect(clientIp(forged, { remoteAddr: "203.0.113.9" }, source)).toBe("203.0.113.9");
    expect(clientIp(forged, { remoteAddr: "::ffff:203.0.113.9" }, source)).toBe("203.0.113.9");
    expect(clientIp(forged, { remoteAddr: "2001:DB8::9" }, source)).toBe("2001:db8::9");
    expect(clientIp(forged, { remoteAddr: "192.0.2.2" }, header("x-forwarded-for:1"))).toBe("192.0.2.2");
  });

  it("from loopback by default, in either family, IPv4-mapped included (a dual-stack listener's IPv4 peers)", () => {
    for (const remoteAddr of ["127.0.0.1", "127.200.0.7", "::1", "::ffff:127.0.0.1"]) {
      expect(clientIp(forged, { remoteAddr }, header("x-real-ip")), remoteAddr).toBe("8.8.8.8");
    }
  });

  it("without a socket peer, believes no header", () => {
    expect(clientIp(forged, undefined, header("x-real-ip"))).toBe(UNKNOWN_CLIENT);
  });

  it("from any peer on the Edge Runtime", () => {
    const cloudflare = requestWith({ "cf-connecting-ip": "198.51.100.5" });
    expect(clientIp(cloudflare, { remoteAddr: "203.0.113.9" }, sourceOf({}, { onSupabase: true, edgeRuntime: true }))).toBe("198.51.100.5");
  });
});

describe("TRUSTED_PROXIES: addresses and networks (CIDR), parsed once at start", () => {
  it("matches a peer inside any listed network of its family, and no other", () => {
    const proxies = TrustedProxies.parse("10.0.0.0/8, 2001:db8::/32,192.0.2.7");
    for (const peer of ["10.0.0.1", "10.255.255.255", "2001:db8:ffff::1", "192.0.2.7", "::ffff:10.1.2.3"]) expect(proxies.trusts(peer), peer).toBe(true);
    for (const peer of ["11.0.0.1", "9.255.255.255", "2001:db9::1", "192.0.2.8", "::1", "127.0.0.1", "not-an-ip", undefined]) {
      expect(proxies.trusts(peer), String(peer)).toBe(false);
    }
  });

  it("reads an IPv4-mapped network as the IPv4 network it maps", () => {
    const proxies = TrustedProxies.parse("::ffff:192.168.0.0/112");
    expect(proxies.trusts("192.168.3.4")).toBe(true);
    expect(proxies.trusts("::ffff:192.168.3.4")).toBe(true);
    expect(proxies.trusts("192.169.0.1")).toBe(false);
  });

  it("names every entry that holds all addresses of a family, which start warns of", () => {
    expect(TrustedProxies.parse("127.0.0.1,0.0.0.0/0").everyAddress).toEqual(["0.0.0.0/0"]);
    expect(TrustedProxies.parse("::/0, ::ffff:0.0.0.0/96").everyAddress).toEqual(["::/0", "::ffff:0.0.0.0/96"]);
    expect(TrustedProxies.parse("127.0.0.0/8,::1").everyAddress).toEqual([]);
    expect(everyAddressWarning(sourceOf({ CLIENT_IP_HEADER: "x-real-ip", TRUSTED_PROXIES: "0.0.0.0/0" }))).toMatchObject({
      variable: "TRUSTED_PROXIES",
      networks: "0.0.0.0/0",
    });
    // No header read, or the Edge Runtime's gateway: nothing is believed from TRUSTED_PROXIES, so nothing to warn of.
    expect(everyAddressWarning(sourceOf({ TRUSTED_PROXIES: "0.0.0.0/0" }))).toBeUndefined();
    expect(everyAddressWarning(sourceOf({ TRUSTED_PROXIES: "0.0.0.0/0" }, { onSupabase: true, edgeRuntime: true }))).toBeUndefined();
  });
});

describe("the client IP of a request (clientIp)", () => {
  it("unset: the socket peer, whatever the headers say", () => {
    const request = requestWith({ "x-forwarded-for": "198.51.100.1", "cf-connecting-ip": "198.51.100.2" });
    expect(clientIp(request, PEER, sourceOf({}))).toBe("127.0.0.9");
  });

  it("x-forwarded-for: the first entry, trimmed", () => {
    expect(clientIp(requestWith({ "x-forwarded-for": " 198.51.100.1 , 10.0.0.1, 10.0.0.2" }), PEER, header("x-forwarded-for"))).toBe("198.51.100.1");
  });

  it("x-forwarded-for:N: the entry N from the right, so entries a client prepends are ignored", () => {
    const forwarded = requestWith({ "x-forwarded-for": "6.6.6.6, 198.51.100.1, 10.0.0.1" });
    expect(clientIp(forwarded, PEER, header("x-forwarded-for:1"))).toBe("10.0.0.1");
    expect(clientIp(forwarded, PEER, header("x-forwarded-for:2"))).toBe("198.51.100.1");
    expect(clientIp(forwarded, PEER, header("x-forwarded-for:3"))).toBe("6.6.6.6");
  });

  it("x-real-ip and cf-connecting-ip: the whole value, one address", () => {
    const request = requestWith({ "x-forwarded-for": "6.6.6.6", "x-real-ip": "198.51.100.3", "cf-connecting-ip": "2001:db8::7" });
    expect(clientIp(request, PEER, header("x-real-ip"))).toBe("198.51.100.3");
    expect(clientIp(request, PEER, header("cf-connecting-ip"))).toBe("2001:db8::7");
  });

  it("spells one address one way: IPv6 lower-cased, IPv4-mapped IPv6 as IPv4", () => {
    const source = header("cf-connecting-ip");
    expect(clientIp(requestWith({ "cf-connecting-ip": "2001:DB8::7" }), PEER, source)).toBe("2001:db8::7");
    expect(clientIp(requestWith({ "cf-connecting-ip": "::FFFF:198.51.100.4" }), PEER, source)).toBe("198.51.100.4");
  });

  it("is unknown when the chosen header is missing, names too few proxies, or holds no IP address", () => {
    expect(clientIp(requestWith({ "x-forwarded-for": "198.51.100.1" }), PEER, header("cf-connecting-ip"))).toBe(UNKNOWN_CLIENT);
    expect(clientIp(requestWith({ "x-forwarded-for": "198.51.100.1" }), PEER, header("x-forwarded-for:2"))).toBe(UNKNOWN_CLIENT);
    for (const value of ["", "unknown", "198.51.100.1:443", "[2001:db8::1]", "198.51.100.256", "198.51.100.1, 10.0.0.1", "::ffff:999.1.1.1", "1".repeat(100)]) {
      expect(clientIp(requestWith({ "x-real-ip": value }), PEER, header("x-real-ip")), value).toBe(UNKNOWN_CLIENT);
    }
    expect(clientIp(requestWith({ "x-forwarded-for": "not-an-ip, 198.51.100.1" }), PEER, header("x-forwarded-for"))).toBe(UNKNOWN_CLIENT);
  });
});

describe("rate limits of IPv6 clients (10 per minute per client, IPv6 by its /64)", () => {
  const database = scopedDatabase();

  const validation = (ip: string) => ({ method: "POST", headers: { "cf-connecting-ip": ip }, body: "{}" });

  it("refuses the 11th request of a /64 rotating through its addresses, and another /64 keeps its own bucket", async () => {
    const { request } = testApp(database.db, { now: clock.now, clientIpSource: header("cf-connecting-ip") });
    const statuses: number[] = [];
    for (let i = 1; i <= 30; i += 1) statuses.push((await request("/api/v2/license", validation(`2001:db8:1:1::${i.toString(16)}`))).status);
    expect(statuses).toEqual([...Array(10).fill(400), ...Array(20).fill(429)]);
    expect((await request("/api/v2/license", validation("2001:db8:1:2::1"))).status).toBe(400);
  });

  it("refuses a respelt address once its bucket is spent, and counts IPv4-mapped IPv6 as the IPv4 client", async () => {
    const { request } = testApp(database.db, { now: clock.now, clientIpSource: header("cf-connecting-ip") });
    const spellings = ["2001:db8:2::1", "2001:0db8:2::1", "2001:db8:2:0:0:0:0:1", "2001:DB8:2::0001"];
    const statuses: number[] = [];
    for (let i = 0; i < 12; i += 1) statuses.push((await request("/api/v2/license", validation(spellings[i % 4]))).status);
    expect(statuses).toEqual([...Array(10).fill(400), 429, 429]);
    const v4: number[] = [];
    for (let i = 0; i < 11; i += 1) v4.push((await request("/api/v2/license", validation(i % 2 ? "::ffff:0102:0304" : "1.2.3.4"))).status);
    expect(v4).toEqual([...Array(10).fill(400), 429]);
  });

  it("limits each address on its own with a prefix length of 128", async () => {
    const { request } = testApp(database.db, { now: clock.now, clientIpSource: header("cf-connecting-ip"), ipv6PrefixLength: 128 });
    const statuses: number[] = [];
    for (let i = 1; i <= 11; i += 1) statuses.push((await request("/api/v2/license", validation(`2001:db8:3:1::${i}`))).status);
    expect(statuses).toEqual(Array(11).fill(400));
  });
});

describe("rate limits by the chosen client IP (10 per minute per client, a bucket per route)", () => {
  const database = scopedDatabase();

  /** A validation refused before any database work (no content type): only the limit is exercised. */
  const validation = (headers: Record<string, string>) => ({ method: "POST", headers, body: "{}" });
  let forged = 0;
  /** An X-Forwarded-For no request has sent before: a new bucket each time, if it were trusted. */
  const forgedForwardedFor = () => `192.0.2.${++forged % 250}, 10.${forged}.0.1`;

  const cases = [
    { name: "cf-connecting-ip", client: (ip: string) => ({ "cf-connecting-ip": ip, "x-forwarded-for": forgedForwardedFor() }) },
    { name: "x-real-ip", client: (ip: string) => ({ "x-real-ip": ip, "x-forwarded-for": forgedForwardedFor() }) },
    // Behind one proxy that appends the address it saw: whatever the client sent comes before it.
    { name: "x-forwarded-for:1", client: (ip: string) => ({ "x-forwarded-for": `${forgedForwardedFor()}, ${ip}` }) },
  ];
  for (const { name, client } of cases) {
    it(`${name}: forged X-Forwarded-For values open no new bucket, and another client keeps its own`, async () => {
      const { request } = testApp(database.db, { now: clock.now, clientIpSource: header(name) });
      const statuses: number[] = [];
      for (let i = 0; i < 11; i += 1) statuses.push((await request("/api/v2/license", validation(client("198.51.100.60")))).status);
      expect(statuses).toEqual([...Array(10).fill(400), 429]);
      expect((await request("/api/v2/license", validation(client("198.51.100.61")))).status).toBe(400);
    });
  }

  it("x-forwarded-for (the first entry): each first entry is its own client, so only a proxy that overwrites the header may be trusted this way", async () => {
    const { request } = testApp(database.db, { now: clock.now, clientIpSource: header("x-forwarded-for") });
    const statuses: number[] = [];
    for (let i = 0; i < 11; i += 1) statuses.push((await request("/api/v2/license", validation({ "x-forwarded-for": forgedForwardedFor() }))).status);
    expect(statuses).toEqual(Array(11).fill(400));
  });

  it("requests without a usable client IP share one \"unknown\" bucket per route: limited, never unlimited", async () => {
    const { request } = testApp(database.db, { now: clock.now, clientIpSource: header("cf-connecting-ip") });
    const unusable: Record<string, string>[] = [{}, { "cf-connecting-ip": "not-an-ip" }, { "cf-connecting-ip": "198.51.100.1, 198.51.100.2" }];
    const statuses: number[] = [];
    for (let i = 0; i < 11; i += 1) {
      statuses.push((await request("/api/v2/license", validation({ ...unusable[i % 3], "x-forwarded-for": forgedForwardedFor() }))).status);
    }
    expect(statuses).toEqual([...Array(10).fill(400), 429]);
    // Another route's "unknown" bucket is its own: the legacy schedule read still answers.
    expect((await request("/api/v2/schedule", { headers: { "x-forwarded-for": forgedForwardedFor() } })).status).toBe(400);
    // And a client whose header holds an address is not in it.
    expect((await request("/api/v2/license", validation({ "cf-connecting-ip": "198.51.100.62" }))).status).toBe(400);
  });
});

/** A GET from `localAddress` (a loopback address of its own, so the server sees that peer); resolves to the status. */
function statusFrom(server: RunningServer, path: string, localAddress: string, headers: Record<string, string>): Promise<number> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const sent = httpRequest({ host: hostname, port, path, localAddress, headers, agent: false }, (response) => {
      response.resume();
      response.once("end", () => resolve(response.statusCode ?? 0));
    });
    sent.once("error", reject);
    sent.end();
  });
}

/**
 * Issue 49: a caller who reached the workers' port directly sent 15 schedule reads with 15 forged
 * X-Real-IP values and got 15 200s, and its forged 8.8.8.8 became the key's last_seen_ip. Here the
 * proxy is 127.0.0.2 (TRUSTED_PROXIES), and callers from other loopback addresses reach the port
 * as that caller did.
 */
describe("npm run start:workers with CLIENT_IP_HEADER=x-real-ip believes X-Real-IP only from TRUSTED_PROXIES", () => {
  const database = scopedDatabase();
  const PROXY = "127.0.0.2";
  let server: RunningServer;
  /** 21 reads: a limit of 10 a minute lets at most 20 through in the two windows that quick reads can straddle. */
  const READS = 21;
  const schedule = (key: string) => `/api/v2/licenses/${key}/schedule`;

  beforeAll(async () => {
    server = await startServer(
      { ...database.serverEnv, CLIENT_IP_HEADER: "x-real-ip", TRUSTED_PROXIES: PROXY, DENO_JOBS: "1" },
      undefined,
      { startScript: true, script: "start:workers" },
    );
  });
  afterAll(() => server?.stop());

  it("from a peer that is not a proxy, forged X-Real-IP values pick no bucket: the peer's own is limited", async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= READS; i += 1) statuses.push(await statusFrom(server, schedule("DEMO-0000-0000-0001"), "127.0.0.3", { "x-real-ip": `198.51.100.${i}` }));
    expect(statuses).toContain(429);
  });

  it("from the proxy, X-Real-IP is the client: each address its own bucket", async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= READS; i += 1) statuses.push(await statusFrom(server, schedule("DEMO-0000-0000-0002"), PROXY, { "x-real-ip": `203.0.113.${i}` }));
    expect(statuses).toEqual(Array(READS).fill(200));
  });

  it("records the peer as last_seen_ip from a peer that is not a proxy, and X-Real-IP from the proxy", async () => {
    expect(await statusFrom(server, schedule("DEMO-0000-0000-0001"), "127.0.0.4", { "x-real-ip": "8.8.8.8" })).toBe(200);
    expect(await statusFrom(server, schedule("DEMO-0000-0000-0002"), PROXY, { "x-real-ip": "203.0.113.200" })).toBe(200);
    // A worker writes the sightings it holds when it stops.
    await server.stop();
    const rows = await database.db.query<{ license_key: string; ip: string }>(
      "select license_key, host(last_seen_ip) as ip from public.kiosk_sightings where license_key in ('DEMO-0000-0000-0001', 'DEMO-0000-0000-0002') order by license_key",
    );
    expect(rows).toEqual([{ license_key: "DEMO-0000-0000-0001", ip: "127.0.0.4" }, { license_key: "DEMO-0000-0000-0002", ip: "203.0.113.200" }]);
  });
});
