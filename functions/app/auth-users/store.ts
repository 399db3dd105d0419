import { type Database, sqlTimestamp } from "../db/database.ts";


export interface UnlinkedAccount {
  id: string;
  email: string;
  display_name: string;
  /** Tries so far, this one included. */
  attempts: number;
}

/** Claims accounts due to be linked to an Auth user (only `id`, when given), each for `leaseSeconds`. */
export function claimUnlinkedAccounts(
  db: Database,
  input: { nowMs: number; leaseSeconds: number; limit: number; id?: string },
): Promise<UnlinkedAccount[]> {
  return db.query<UnlinkedAccount>(
    `select id::text, email, display_name, attempts
     from cadence.claim_unlinked_accounts($1::timestamptz, $2, $3, $4::uuid)`,
    [sqlTimestamp(input.nowMs), input.leaseSeconds, input.limit, input.id ?? null],
  );
}

/** Records the link; false when the account is already linked to another Auth user. */
export async function linkAuthUser(db: Database, accountId: string, authUserId: string): Promise<boolean> {
  const [row] = await db.query<{ linked: boolean }>("select cadence.link_auth_user($1::uuid, $2::uuid) as linked", [
    accountId,
    authUserId,
  ]);
  return row.linked;
}

/** Records a failed try: the account stays unlinked, due again at `retryAtMs`. */
export async function markAuthLinkFailed(db: Database, accountId: string, error: string, retryAtMs: number): Promise<void> {
  await db.query("select cadence.mark_auth_link_failed($1::uuid, $2, $3::timestamptz)", [accountId, error, sqlTimestamp(retryAtMs)]);
}
