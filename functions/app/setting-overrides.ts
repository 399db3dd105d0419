import type { Config } from "./config.ts";
import { SUPABASE_CLIENT_IP_HEADER } from "./http/client-ip.ts";

/** A setting the operator gave that another setting overrides: one warning line at start names both. */
export interface SettingOverride {
  /** The variable whose value has no effect. */
  ignored: string;
  /** The variable (or the default of one) that wins over it. */
  by: string;
  why: string;
}

/**
 * Every setting the operator gave that another one overrides, so none is ignored without a word
 * (issue 39: with `SUPABASE_DB_URL`, `TRUST_PROXY=true` lost to the Supabase default of
 * `CLIENT_IP_HEADER`, and every local client shared one rate-limit bucket). Only what the operator
 * gave counts: a setting with a default of its own is not in this list. `edgeRuntime`: the process
 * is a worker of Supabase's Edge Runtime, which no variable says.
 *
 * @example
 * for (const override of settingOverrides(config, { edgeRuntime: onEdgeRuntime() })) log("warn", "setting_overridden", { ...override });
 */
export function settingOverrides(config: Config, where: { edgeRuntime: boolean }): SettingOverride[] {
  const overrides: SettingOverride[] = [];
  if (where.edgeRuntime && config.TRUSTED_PROXIES) {
    overrides.push({
      ignored: "TRUSTED_PROXIES",
      by: "Supabase's Edge Runtime",
      why: "every request reaches the function through Supabase's gateway, whose address is neither documented nor stable: the client-IP header is believed from it (functions/README.md, Client IP)",
    });
  }
  const onSupabase = !config.DATABASE_URL && Boolean(config.SUPABASE_DB_URL);
  if (config.DATABASE_URL && config.SUPABASE_DB_URL) {
    overrides.push({ ignored: "SUPABASE_DB_URL", by: "DATABASE_URL", why: "DATABASE_URL is the database when both are set" });
  }
  if (onSupabase && config.TRUST_PROXY && !config.CLIENT_IP_HEADER) {
    overrides.push({
      ignored: "TRUST_PROXY",
      by: "CLIENT_IP_HEADER",
      why: `with SUPABASE_DB_URL the client IP comes from ${SUPABASE_CLIENT_IP_HEADER}, the default of CLIENT_IP_HEADER there; to read X-Forwarded-For, set CLIENT_IP_HEADER=x-forwarded-for (or x-forwarded-for:N) and unset TRUST_PROXY`,
    });
  }
  if (config.UPSTASH_REDIS_REST_URL && config.REDIS_URL) {
    overrides.push({ ignored: "REDIS_URL", by: "UPSTASH_REDIS_REST_URL", why: "the rate limits use Upstash when both are set" });
  }
  return overrides;
}
