import type { Database } from "../db/database.ts";
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

/** Reads one catalogue payload as JSON text. */
export async function readCatalogue(db: Database, read: CatalogueRead): Promise<string> {
  const [row] = await db.query<{ body: string }>(catalogueQueries[read]);
  return row.body;
}

/** The pairing outcome for a key and e-mail, with the ids of the proclamations assigned to the account when paired. */
export async function readEntitlement(db: Database, key: string, email: string) {
  const [row] = await db.query<{ outcome: PairingOutcome; ids: string[] | null }>(
    "select outcome, ids::text[] as ids from cadence.entitled_proclamation_ids($1, $2)",
    [key, email],
  );
  return row;
}
