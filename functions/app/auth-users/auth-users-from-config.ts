import type { Config } from "../config.ts";
import type { AuthUsers } from "./auth-users.ts";
import { supabaseAuthUsers } from "./supabase-auth-users.ts";

/**
 * Supabase Auth when the configuration reaches it (`SUPABASE_URL` and `SUPABASE_SERVICE_ROLE_KEY`,
 * which Supabase sets in every edge function); otherwise none, and accounts get no Auth user.
 */
export function authUsersFromConfig(config: Config): AuthUsers | undefined {
  if (!config.SUPABASE_URL || !config.SUPABASE_SERVICE_ROLE_KEY) return undefined;
  return supabaseAuthUsers({ url: config.SUPABASE_URL, serviceRoleKey: config.SUPABASE_SERVICE_ROLE_KEY });
}
