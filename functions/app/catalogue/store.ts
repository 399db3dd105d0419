import { rowsByRead } from "../batch-while-busy.ts";
import type { Database, QueryOptions } from "../db/database.ts";
import type { PairingOutcome } from "../pairing.ts";

/** The catalogue payloads, serialised by Postgres (cadence.*_json), as JSON text. */
export const catalogueQueries = {
  categories: "select cadence.categories_json()::text as body",
  groups: "select cadence.groups_json()::text as body",
  frequencies: "select cadence.frequencies_json()::text as body",
  colorPalettes: "select cadence.color_palettes_json()::text as body",
  proclamations: "select cadence.proclamations_json()::text as body",
} as const;

export type CatalogueRead = keyof typeof catalogueQueries;

/**
 * Reads one catalogue payload as compact JSON text, the one form every route answers in (Postgres
 * writes `json_build_object` as `{"id" : 1, ...}`). Read once per cache period, so writing it
 * again costs nothing a request sees.
 */
export async function readCatalogue(db: Database, read: CatalogueRead): Promise<string> {
  const [row] = await db.query<{ body: string }>(catalogueQueries[read]);
  return JSON.stringify(JSON.parse(row.body));
}

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
