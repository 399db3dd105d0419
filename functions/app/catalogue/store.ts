import type { Database } from "../db/database.ts";

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
