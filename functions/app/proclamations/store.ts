import type { Database, QueryOptions } from "../db/database.ts";
import { rowsByRead } from "../read-path/batch-while-busy.ts";
import type { PairingOutcome } from "../pairing.ts";

/** A pairing outcome, with the ids of the proclamations assigned to the account when paired. */
export interface Entitlement {
  outcome: PairingOutcome;
  ids: string[] | null;
}

/**
 * Many entitlement reads in one statement (`batchWhileBusy` gathers them): for each key and
 * e-mail, what one call of cadence.entitlements answers.
 */
export async function readEntitlements(db: Database, reads: ReadonlyArray<{ key: string; email: string }>, options?: QueryOptions) {
  const rows = await db.query<Entitlement & { n: string }>(
    "select e.n, e.outcome, to_json(e.ids::text[]) as ids from cadence.entitlements($1::text[], $2::text[]) as e",
    [reads.map((read) => read.key), reads.map((read) => read.email)],
    options,
  );
  return rowsByRead<Entitlement>(reads.length, rows);
}
