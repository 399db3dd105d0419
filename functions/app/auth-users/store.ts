import { type Database, sqlTimestamp } from "../db/database.ts";


/** An account due for Supabase Auth: without an Auth user yet, or with one its e-mail has not reached. */
export interface AccountDueForAuth {
  id: string;
  email: string;
  display_name: string;
  /** Tries so far, this one included. */
  attempts: number;
  /** Its Auth user, when it has one already: the user's e-mail is then behind the account's. */
  auth_user_id: string | null;
}

/** Claims accounts due for Auth (only `id`, when given), each for `leaseSeconds`. */
export function claimAccountsDueForAuth(
  db: Database,
  input: { nowMs: number; leaseSeconds: number; limit: number; id?: string },
): Promise<AccountDueForAuth[]> {
  return db.query<AccountDueForAuth>(
    `select id::text, email, display_name, attempts, auth_user_id::text
     from cadence.claim_accounts_due_for_auth($1::timestamptz, $2, $3, $4::uuid)`,
    [sqlTimestamp(input.nowMs), input.leaseSeconds, input.limit, input.id ?? null],
  );
}

/** Records the link and the e-mail Auth was given; false when the account is already linked to another Auth user. */
export async function linkAuthUser(db: Database, accountId: string, authUserId: string, email: string): Promise<boolean> {
  const [row] = await db.query<{ linked: boolean }>("select cadence.link_auth_user($1::uuid, $2::uuid, $3) as linked", [
    accountId,
    authUserId,
    email,
  ]);
  return row.linked;
}

/** Records a failed try: the account stays due, again at `retryAtMs`. */
export async function markAuthLinkFailed(db: Database, accountId: string, error: string, retryAtMs: number): Promise<void> {
  await db.query("select cadence.mark_auth_link_failed($1::uuid, $2, $3::timestamptz)", [accountId, error, sqlTimestamp(retryAtMs)]);
}
