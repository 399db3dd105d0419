import { type AuthError, createClient } from "@supabase/supabase-js";
import type { AuthUsers } from "./auth-users.ts";

export interface SupabaseAuthOptions {
  /** The project URL (`SUPABASE_URL`); the Auth API lives under `/auth/v1`. */
  url: string;
  /** The service role key: the admin API refuses anything less. Never logged. */
  serviceRoleKey: string;
  /** An admin call that takes longer fails, and the account is retried later. */
  timeoutMs?: number;
}

/** Auth's answers to a create whose e-mail (or id) is already registered. */
const ALREADY_EXISTS = new Set(["email_exists", "user_already_exists"]);

function describe(call: string, error: AuthError): string {
  return `auth admin ${call} failed (${error.status ?? "no answer"}${error.code ? ` ${error.code}` : ""}): ${error.message}`;
}

/**
 * Auth users through Supabase Auth's admin API (supabase-js's `auth.admin`), on a client built
 * with the service role key that keeps no session: no storage, no token refresh, no URL parsing.
 *
 * `ensure` creates the user with the account's id, its e-mail confirmed (the account's e-mail
 * was given by the integrator; no confirmation mail is sent) and the display name as metadata.
 * When Auth answers that the user already exists (a retry, or a parallel onboarding that got
 * there first), the user with the account's id is the answer; if there is none, the e-mail
 * belongs to an Auth user Cadence did not create, which is never linked automatically: it may be
 * unconfirmed, and linking it would hand the account to whoever registered the address.
 *
 * @example
 * const users = supabaseAuthUsers({ url: config.SUPABASE_URL, serviceRoleKey: config.SUPABASE_SERVICE_ROLE_KEY });
 * const authUserId = await users.ensure({ id: accountId, email, name });
 */
export function supabaseAuthUsers(options: SupabaseAuthOptions): AuthUsers {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const { admin } = createClient(options.url, options.serviceRoleKey, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    global: {
      fetch: (input, init) => {
        const deadline = AbortSignal.timeout(timeoutMs);
        return fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline });
      },
    },
  }).auth;
  return {
    async ensure(account) {
      const created = await admin.createUser({
        id: account.id,
        email: account.email,
        email_confirm: true,
        user_metadata: { name: account.name },
        app_metadata: { cadence_account_id: account.id },
      });
      if (!created.error) return created.data.user.id;
      if (!ALREADY_EXISTS.has(created.error.code ?? "")) throw new Error(describe("createUser", created.error));

      const existing = await admin.getUserById(account.id);
      if (existing.data.user) {
        if (existing.data.user.email?.toLowerCase() !== account.email.toLowerCase()) {
          throw new Error("the Auth user with this account's id has another e-mail");
        }
        return existing.data.user.id;
      }
      if (existing.error && existing.error.status !== 404) throw new Error(describe("getUserById", existing.error));
      throw new Error(
        "the e-mail belongs to an Auth user Cadence did not create: link it by hand once it is known to be the owner's",
      );
    },
    async changeEmail(authUserId, email) {
      const updated = await admin.updateUserById(authUserId, { email, email_confirm: true });
      if (updated.error) throw new Error(describe("updateUserById", updated.error));
    },
  };
}
