import { describe, expect, it } from "vitest";
import { parseConfig } from "../../functions/app/config.ts";
import { openRuntime } from "../../functions/app/runtime.ts";
import { settingOverrides } from "../../functions/app/setting-overrides.ts";
import { memoryLogger } from "../support/app.ts";
import { freshDatabase } from "../support/database.ts";

const overridden = (env: Record<string, string>, edgeRuntime = false) =>
  settingOverrides(parseConfig(env), { edgeRuntime }).map(({ ignored, by }) => `${ignored} by ${by}`);

describe("a setting another one overrides: one warning line at start, naming both", () => {
  it("TRUST_PROXY=true under SUPABASE_DB_URL, where CLIENT_IP_HEADER defaults to cf-connecting-ip", () => {
    expect(overridden({ SUPABASE_DB_URL: "postgres://db.example/postgres", TRUST_PROXY: "true" })).toEqual(["TRUST_PROXY by CLIENT_IP_HEADER"]);
    // Off Supabase TRUST_PROXY is the rule, and on Supabase without it nothing is ignored.
    expect(overridden({ TRUST_PROXY: "true" })).toEqual([]);
    expect(overridden({ SUPABASE_DB_URL: "postgres://db.example/postgres" })).toEqual([]);
  });

  it("SUPABASE_DB_URL beside DATABASE_URL, and REDIS_URL beside Upstash", () => {
    expect(overridden({ DATABASE_URL: "postgres://a.example/db", SUPABASE_DB_URL: "postgres://b.example/db", TRUST_PROXY: "true" })).toEqual(["SUPABASE_DB_URL by DATABASE_URL"]);
    expect(overridden({ REDIS_URL: "redis://r.example", UPSTASH_REDIS_REST_URL: "https://u.example", UPSTASH_REDIS_REST_TOKEN: "t" })).toEqual(["REDIS_URL by UPSTASH_REDIS_REST_URL"]);
  });

  it("TRUSTED_PROXIES on Supabase's Edge Runtime, where the platform's gateway is every request's peer", () => {
    const env = { SUPABASE_DB_URL: "postgres://db.example/postgres", TRUSTED_PROXIES: "10.0.0.5" };
    expect(overridden(env, true)).toEqual(["TRUSTED_PROXIES by Supabase's Edge Runtime"]);
    // Anywhere else the socket peer is checked against it.
    expect(overridden(env, false)).toEqual([]);
  });

  it("is logged once at start, as a warning, with the reason", async () => {
    const database = await freshDatabase();
    const { log, lines } = memoryLogger();
    const runtime = await openRuntime(parseConfig({ SUPABASE_DB_URL: database.url, TRUST_PROXY: "true" }), log);
    try {
      const warnings = lines.map((line) => JSON.parse(line)).filter((line) => line.event === "setting_overridden");
      expect(warnings).toEqual([{ level: "warn", event: "setting_overridden", ignored: "TRUST_PROXY", by: "CLIENT_IP_HEADER", why: expect.stringContaining("cf-connecting-ip") }]);
    } finally {
      await runtime.close();
      await database.drop();
    }
  });
});
