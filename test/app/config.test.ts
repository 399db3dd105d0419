import { describe, expect, it } from "vitest";
import { parseConfig } from "../../functions/app/config.ts";
import { ConfigError } from "../../functions/app/config-error.ts";
import { nearMisses } from "../../functions/app/near-miss-variables.ts";

describe("configuration", () => {
  it("has defaults for a local start: 127.0.0.1 port 8000, data in .data, console mailer", () => {
    const config = parseConfig({});
    expect(config).toMatchObject({ HOST: "127.0.0.1", PORT: 8000, DATA_DIR: ".data", TRUST_PROXY: false, MAILER: "console" });
    expect(config.DATABASE_URL).toBeUndefined();
  });

  it("treats empty variables as unset", () => {
    const config = parseConfig({ PORT: "", DATABASE_URL: "" });
    expect(config.PORT).toBe(8000);
    expect(config.DATABASE_URL).toBeUndefined();
  });

  it("refuses a bad value with a message naming the variable", () => {
    expect(() => parseConfig({ PORT: "eighty" })).toThrow(ConfigError);
    expect(() => parseConfig({ PORT: "eighty" })).toThrow(/PORT/);
    expect(() => parseConfig({ TRUST_PROXY: "maybe" })).toThrow(/TRUST_PROXY/);
    expect(() => parseConfig({ DATABASE_URL: "not a url" })).toThrow(/DATABASE_URL/);
    expect(() => parseConfig({ MAILER: "smtp" })).toThrow(/MAILER/);
  });

  it("takes DATABASE_URL and SUPABASE_DB_URL as postgres:// or postgresql:// URLs only", () => {
    for (const url of ["postgres://u:p@db:5432/app", "postgresql://db/app"]) {
      expect(parseConfig({ DATABASE_URL: url, SUPABASE_DB_URL: url })).toMatchObject({ DATABASE_URL: url, SUPABASE_DB_URL: url });
    }
    for (const variable of ["DATABASE_URL", "SUPABASE_DB_URL"]) {
      for (const url of ["mysql://u:p@db:3306/app", "http://db:5432/app", "redis://db:6379"]) {
        expect(() => parseConfig({ [variable]: url }), url).toThrow(`${variable}: must be a postgres:// or postgresql:// URL`);
      }
    }
  });

  it("takes REDIS_URL as a redis:// or rediss:// URL only", () => {
    expect(parseConfig({ REDIS_URL: "redis://127.0.0.1:6379" }).REDIS_URL).toBe("redis://127.0.0.1:6379");
    expect(parseConfig({ REDIS_URL: "rediss://user:pw@cache.example:6380/1" }).REDIS_URL).toBe("rediss://user:pw@cache.example:6380/1");
    for (const url of ["http://127.0.0.1:6379", "https://x.upstash.io", "127.0.0.1:6379"]) {
      expect(() => parseConfig({ REDIS_URL: url }), url).toThrow("REDIS_URL: must be a redis:// or rediss:// URL");
    }
  });

  it("leaves SQL_PORT unset unless given, so that only the default moves when it is taken", () => {
    expect(parseConfig({}).SQL_PORT).toBeUndefined();
    expect(parseConfig({ SQL_PORT: "" }).SQL_PORT).toBeUndefined();
    expect(parseConfig({ SQL_PORT: "54322" }).SQL_PORT).toBe(54322);
    expect(parseConfig({ SQL_PORT: "0" }).SQL_PORT).toBe(0);
    expect(() => parseConfig({ SQL_PORT: "psql" })).toThrow("SQL_PORT: must be a port number");
  });

  it("bounds the wait on the database at 2 s by default, DATABASE_DEADLINE_MS between 100 ms and 60 s", () => {
    expect(parseConfig({}).DATABASE_DEADLINE_MS).toBe(2_000);
    expect(parseConfig({ DATABASE_DEADLINE_MS: "750" }).DATABASE_DEADLINE_MS).toBe(750);
    for (const bad of ["50", "60001", "1.5", "soon"]) {
      expect(() => parseConfig({ DATABASE_DEADLINE_MS: bad })).toThrow(/DATABASE_DEADLINE_MS/);
    }
  });

  it("requires RESEND_API_KEY with MAILER=resend, and Upstash URL and token together", () => {
    expect(() => parseConfig({ MAILER: "resend" })).toThrow(/RESEND_API_KEY/);
    expect(() => parseConfig({ UPSTASH_REDIS_REST_URL: "https://x.upstash.io" })).toThrow(/UPSTASH_REDIS_REST_TOKEN/);
  });

  it("leaves Upstash's rate-limit analytics and deny lists off by default, and refuses them without Upstash", () => {
    expect(parseConfig({})).toMatchObject({ UPSTASH_RATELIMIT_ANALYTICS: false, UPSTASH_RATELIMIT_DENY_LISTS: false });
    const upstash = { UPSTASH_REDIS_REST_URL: "https://x.upstash.io", UPSTASH_REDIS_REST_TOKEN: "token" };
    expect(parseConfig({ ...upstash, UPSTASH_RATELIMIT_ANALYTICS: "true", UPSTASH_RATELIMIT_DENY_LISTS: "1" })).toMatchObject({
      UPSTASH_RATELIMIT_ANALYTICS: true,
      UPSTASH_RATELIMIT_DENY_LISTS: true,
    });
    expect(() => parseConfig({ REDIS_URL: "redis://127.0.0.1:6379", UPSTASH_RATELIMIT_ANALYTICS: "true" })).toThrow(/UPSTASH_RATELIMIT_ANALYTICS/);
    expect(() => parseConfig({ UPSTASH_RATELIMIT_DENY_LISTS: "true" })).toThrow(/UPSTASH_RATELIMIT_DENY_LISTS/);
  });

  it("accepts SIGNING_SECRET_PREVIOUS beside SIGNING_SECRET, and refuses it alone", () => {
    const rotating = parseConfig({ SIGNING_SECRET: "new-secret", SIGNING_SECRET_PREVIOUS: "old-secret" });
    expect(rotating).toMatchObject({ SIGNING_SECRET: "new-secret", SIGNING_SECRET_PREVIOUS: "old-secret" });
    expect(parseConfig({ SIGNING_SECRET: "new-secret" }).SIGNING_SECRET_PREVIOUS).toBeUndefined();
    expect(() => parseConfig({ SIGNING_SECRET_PREVIOUS: "old-secret" })).toThrow(/SIGNING_SECRET_PREVIOUS/);
  });

  it("accepts STANDARD_WEBHOOKS_SECRET as whsec_ and the base64 of 24 to 64 bytes, and refuses anything else", () => {
    const base64Of = (bytes: number) => Buffer.alloc(bytes, 7).toString("base64");
    for (const bytes of [24, 32, 64]) {
      expect(parseConfig({ STANDARD_WEBHOOKS_SECRET: `whsec_${base64Of(bytes)}` }).STANDARD_WEBHOOKS_SECRET).toBe(`whsec_${base64Of(bytes)}`);
    }
    for (const secret of [base64Of(32), `whsec_${base64Of(23)}`, `whsec_${base64Of(65)}`, "whsec_not base64!", `v1,whsec_${base64Of(32)}`]) {
      expect(() => parseConfig({ STANDARD_WEBHOOKS_SECRET: secret })).toThrow(/STANDARD_WEBHOOKS_SECRET/);
    }
  });

  it("reads CLIENT_IP_HEADER in any case, as x-forwarded-for, x-forwarded-for:N, x-real-ip or cf-connecting-ip", () => {
    expect(parseConfig({}).CLIENT_IP_HEADER).toBeUndefined();
    expect(parseConfig({ CLIENT_IP_HEADER: "CF-Connecting-IP" }).CLIENT_IP_HEADER).toEqual({ name: "cf-connecting-ip", header: "cf-connecting-ip", fromRight: null });
    expect(parseConfig({ CLIENT_IP_HEADER: "x-forwarded-for:2" }).CLIENT_IP_HEADER).toEqual({ name: "x-forwarded-for:2", header: "x-forwarded-for", fromRight: 2 });
    expect(parseConfig({ CLIENT_IP_HEADER: "x-real-ip" }).CLIENT_IP_HEADER?.header).toBe("x-real-ip");
    for (const bad of ["forwarded", "x-forwarded-for:0", "x-forwarded-for:-1", "x-forwarded-for:100", "x-real-ip:1"]) {
      expect(() => parseConfig({ CLIENT_IP_HEADER: bad }), bad).toThrow(/CLIENT_IP_HEADER/);
    }
  });

  it("limits IPv6 clients by their /64 by default, IPV6_RATE_LIMIT_PREFIX from 16 to 128", () => {
    expect(parseConfig({}).IPV6_RATE_LIMIT_PREFIX).toBe(64);
    expect(parseConfig({ IPV6_RATE_LIMIT_PREFIX: "56" }).IPV6_RATE_LIMIT_PREFIX).toBe(56);
    expect(parseConfig({ IPV6_RATE_LIMIT_PREFIX: "128" }).IPV6_RATE_LIMIT_PREFIX).toBe(128);
    for (const bad of ["0", "15", "129", "64.5", "/64"]) {
      expect(() => parseConfig({ IPV6_RATE_LIMIT_PREFIX: bad }), bad).toThrow(/IPV6_RATE_LIMIT_PREFIX: must be a prefix length from 16 to 128/);
    }
  });

  it("reads HOST as the IP address to listen on, and refuses a name or anything else, naming HOST", () => {
    for (const host of ["0.0.0.0", "::", "::1", "192.0.2.2"]) expect(parseConfig({ HOST: host }).HOST).toBe(host);
    for (const bad of ["localhost", "myhost.example.com", "[::1]", "127.0.0.1:8000", "127.1"]) {
      expect(() => parseConfig({ HOST: bad }), bad).toThrow(/HOST: must be an IP address to listen on/);
    }
  });

  it("reads TRUSTED_PROXIES as addresses and networks separated by commas, and names it at the first that is neither", () => {
    expect(parseConfig({}).TRUSTED_PROXIES).toBeUndefined();
    expect(parseConfig({ TRUSTED_PROXIES: "10.0.0.0/8, ::1,192.0.2.7" }).TRUSTED_PROXIES?.trusts("10.9.8.7")).toBe(true);
    for (const bad of ["10.0.0.0/33", "10.0.0.1/", "10.0.0.0/8/8", "10.0.0.0/ 8", "2001:db8::/129", "proxy.example", "10.0.0.1,,::1", "10.0.0.1;10.0.0.2"]) {
      expect(() => parseConfig({ TRUSTED_PROXIES: bad }), bad).toThrow(/TRUSTED_PROXIES: ".*" is not an IP address or network/);
    }
  });

  it("refuses CLIENT_IP_HEADER with TRUST_PROXY=true: one of them names where the client IP comes from", () => {
    expect(() => parseConfig({ CLIENT_IP_HEADER: "x-real-ip", TRUST_PROXY: "true" })).toThrow(/CLIENT_IP_HEADER/);
    expect(parseConfig({ CLIENT_IP_HEADER: "x-real-ip", TRUST_PROXY: "false" }).CLIENT_IP_HEADER?.name).toBe("x-real-ip");
  });
});

describe("variables one edit from Cadence's (functions/app/near-miss-variables.ts)", () => {
  const known = ["SIGNING_SECRET", "DATA_DIR", "DATABASE_URL", "HOST", "PORT"];
  it("names a variable one letter added, dropped, replaced or swapped from one Cadence reads, with that one", () => {
    expect(nearMisses(["SIGNING_SECRT", "DATA_DIRR", "DATABSAE_URL", "DATA_DIT"], known)).toEqual([
      { variable: "SIGNING_SECRT", meant: "SIGNING_SECRET" },
      { variable: "DATA_DIRR", meant: "DATA_DIR" },
      { variable: "DATABSAE_URL", meant: "DATABASE_URL" },
      { variable: "DATA_DIT", meant: "DATA_DIR" },
    ]);
  });
  it("leaves Cadence's own variables, those two edits away, and short names (HOME beside HOST) alone", () => {
    expect(nearMisses(["SIGNING_SECRET", "SIGNIN_SECRT", "HOME", "POST", "PATH", "TERM"], known)).toEqual([]);
  });
});
