import { retryDelayMs } from "../backoff.ts";
import type { Database } from "../db/database.ts";
import type { Logger } from "../log.ts";
import { errorMessage } from "../log.ts";
import type { AuthUsers } from "./auth-users.ts";
import { type AccountDueForAuth, claimAccountsDueForAuth, linkAuthUser, markAuthLinkFailed } from "./store.ts";

/**
 * How long a claimed account is reserved for the worker calling Auth for it: far beyond the two
 * admin calls `ensure` may make (5 s each), short enough that a crashed worker's account comes back soon.
 */
export const AUTH_LINK_LEASE_SECONDS = 60;

/** The ports linking needs; the app's `Deps` and the outbox's ports have them all. */
export interface AuthLinkPorts {
  db: Database;
  log: Logger;
  /** The clock, in epoch milliseconds. */
  now: () => number;
  /** Supabase Auth; absent when Cadence runs without it, and then nothing is linked. */
  authUsers?: AuthUsers;
}


/**
 * Ensures the claimed account's Auth user, or gives the one it has the account's e-mail now, and
 * records the link with that e-mail; or the failure and the next try.
 */
async function link(ports: AuthLinkPorts, authUsers: AuthUsers, account: AccountDueForAuth): Promise<"linked" | "failed"> {
  let failure: string;
  try {
    let authUserId = account.auth_user_id;
    if (authUserId) await authUsers.changeEmail(authUserId, account.email);
    else authUserId = await authUsers.ensure({ id: account.id, email: account.email, name: account.display_name });
    if (await linkAuthUser(ports.db, account.id, authUserId, account.email)) {
      ports.log("info", "auth_user_linked", { accountId: account.id, authUserId });
      return "linked";
    }
    failure = "the account is already linked to another Auth user";
  } catch (error) {
    failure = errorMessage(error);
  }
  ports.log("warn", "auth_user_link_failed", { accountId: account.id, attempts: account.attempts, error: failure });
  // Should recording fail too, the claim's lease runs out and the account is due again.
  await markAuthLinkFailed(ports.db, account.id, failure, ports.now() + retryDelayMs(account.attempts));
  return "failed";
}

/**
 * Makes the just-onboarded account a Supabase Auth user, or gives its Auth user the e-mail just
 * changed, after the transaction that did it committed. Best effort: it never throws; whatever
 * goes wrong leaves the account due, for `linkPendingAccounts`. An account whose Auth user is up
 * to date, or being seen to by a parallel call, is left alone (`not_due`).
 *
 * @example
 * await ensureAuthUser(deps, onboarded.accountId);
 */
export async function ensureAuthUser(
  ports: AuthLinkPorts,
  accountId: string,
): Promise<"linked" | "failed" | "not_due" | "skipped"> {
  if (!ports.authUsers) return "skipped";
  try {
    const [account] = await claimAccountsDueForAuth(ports.db, {
      nowMs: ports.now(),
      leaseSeconds: AUTH_LINK_LEASE_SECONDS,
      limit: 1,
      id: accountId,
    });
    return account ? await link(ports, ports.authUsers, account) : "not_due";
  } catch (error) {
    ports.log("error", "auth_user_link_failed", { accountId, error: errorMessage(error) });
    return "failed";
  }
}

export interface LinkReport {
  linked: number;
  failed: number;
}

/**
 * Links every account still without an Auth user, and gives every Auth user whose account's e-mail
 * changed the new one, whose next try is due, one claimed account at a time (each claim its own lease), until none is due or `max` were tried. Safe in several
 * workers at once. Without Supabase Auth it links nothing.
 *
 * @example
 * const report = await linkPendingAccounts(ports, { max: 100 });
 */
export async function linkPendingAccounts(ports: AuthLinkPorts, options: { max?: number; signal?: AbortSignal } = {}): Promise<LinkReport> {
  const max = options.max ?? 100;
  const report: LinkReport = { linked: 0, failed: 0 };
  if (!ports.authUsers) return report;
  // A process stopping (`signal`) finishes the account under way and leaves the rest to the next run.
  while (report.linked + report.failed < max && !options.signal?.aborted) {
    const [account] = await claimAccountsDueForAuth(ports.db, {
      nowMs: ports.now(),
      leaseSeconds: AUTH_LINK_LEASE_SECONDS,
      limit: 1,
    });
    if (!account) break;
    report[await link(ports, ports.authUsers, account)] += 1;
  }
  return report;
}
