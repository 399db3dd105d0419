import { describe, expect, it } from "vitest";
import { clientIp, ClientIpHeader, clientIpSource, UNKNOWN_CLIENT } from "../../functions/app/http/client-ip.ts";
import { testApp } from "../support/app.ts";
import { testClock } from "../support/clock.ts";
import { scopedDatabase } from "../support/database.ts";

const header = (name: string) => ClientIpHeader.parse(name);
const requestWith = (headers: Record<string, string>) => new Request("http://cadence.test/api/v2/license", { headers });
const PEER = { remoteAddr: "127.0.0.9" };

/** A clock that stands still: every request of a test falls in one minute window, however slow the machine. */
const clock = testClock();

describe("where the client IP comes from (clientIpSource, from the configuration)", () => {
  it("is CLIENT_IP_HEADER when it is set, on Supabase or not", () => {
    for (const onSupabase of [true, false]) {
      expect(clientIpSource({ CLIENT_IP_HEADER: header("x-real-ip"), TRUST_PROXY: false }, onSupabase)).toEqual(header("x-real-ip"));
    }
  });

  it("is CF-Connecting-IP on Supabase when CLIENT_IP_HEADER is unset", () => {
    expect(clientIpSource({ TRUST_PROXY: false }, true)).toEqual(header("cf-connecting-ip"));
  });

  it("is X-Forwarded-For's first entry with TRUST_PROXY=true, else the socket peer", () => {
    expect(clientIpSource({ TRUST_PROXY: true }, false)).toEqual(header("x-forwarded-for"));
    expect(clientIpSource({ TRUST_PROXY: false }, false)).toBe(false);
  });
});

describe("the client IP of a request (clientIp)", () => {
  it("unset: the socket peer, whatever the headers say", () => {
    const request = requestWith({ "x-forwarded-for": "198.51.100.1", "cf-connecting-ip": "198.51.100.2" });
    expect(clientIp(request, PEER, false)).toBe("127.0.0.9");
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
