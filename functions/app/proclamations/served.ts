/**
 * The served proclamations (cadence.proclamations_json), parsed once per cache period so that an
 * entitled subset is cut from memory instead of being assembled by Postgres on every request.
 */
export interface ServedProclamations {
  /** All of them, as the response body. */
  body: string;
  /** Each one's id and JSON text, in the catalogue's order. */
  items: ReadonlyArray<{ id: string; json: string }>;
}

/**
 * Indexes the catalogue's JSON text.
 *
 * @example
 * const served = indexProclamations(await readCatalogue(db, "proclamations"));
 */
export function indexProclamations(text: string): ServedProclamations {
  const items = (JSON.parse(text) as Array<{ id: string }>).map((item) => ({ id: item.id, json: JSON.stringify(item) }));
  return { body: `[${items.map((item) => item.json).join(",")}]`, items };
}

/** The body of the served proclamations among `ids`, in the catalogue's order. */
export function subsetBody(served: ServedProclamations, ids: readonly string[]): string {
  const wanted = new Set(ids);
  return `[${served.items.filter((item) => wanted.has(item.id)).map((item) => item.json).join(",")}]`;
}
