import { createRoute, z } from "@hono/zod-openapi";
import type { Deps } from "../deps.ts";
import { jsonText } from "../http/json.ts";
import { type App, jsonContent, route } from "../http/route.ts";
import { ageHeader } from "../http/age-header.ts";
import { noCredential } from "../http/openapi-security.ts";
import { databaseUnavailable, withAge } from "../http/openapi-responses.ts";
import type { ReadPath } from "../read-path/read-path.ts";
import { Category, ColorPalette, Frequency, Group } from "./schemas.ts";
import { type CatalogueRead, readCatalogue } from "./store.ts";

/** Each read's paths (the contract's aliases serve the same payload), by the operationId generators name them with. */
const reads: Array<{ paths: Record<string, string>; read: CatalogueRead; schema: z.ZodType; summary: string }> = [
  {
    paths: { "/api/v2/categories": "listCategories", "/api/v2/proclamation-categories": "listProclamationCategories" },
    read: "categories",
    schema: z.array(Category),
    summary: "Proclamation categories",
  },
  {
    paths: { "/api/v2/groups": "listGroups", "/api/v2/proclamation-groups": "listProclamationGroups" },
    read: "groups",
    schema: z.array(Group),
    summary: "Proclamation groups, by sortOrder",
  },
  { paths: { "/api/v2/frequencies": "listFrequencies" }, read: "frequencies", schema: z.array(Frequency).length(9), summary: "The nine canonical frequencies" },
  { paths: { "/api/v2/color-palettes": "listColorPalettes" }, read: "colorPalettes", schema: z.array(ColorPalette).length(9), summary: "One palette per canonical frequency" },
];

/**
 * Section 4.1: the catalogue reads and their aliases, each payload served from memory for
 * `deps.catalogueTtlMs` (CATALOGUE_TTL_MS, 5 s): staff edit the catalogue in the dashboard, an edit
 * reaches kiosks within that time, and the database sees one read per payload per period. While the
 * database is unavailable, the last payload read is served however old, with `Age`.
 */
export function catalogueRoutes(app: App, deps: Deps, readPath: ReadPath): void {
  for (const { paths, read, schema, summary } of reads) {
    const cached = readPath.catalogue(() => readCatalogue(deps.db, read));
    for (const [path, operationId] of Object.entries(paths)) {
      route(
        app,
        createRoute({
          method: "get",
          path,
          operationId,
          summary,
          tags: ["catalogue"],
          security: noCredential,
          responses: {
            200: withAge(jsonContent(schema, summary)),
            503: databaseUnavailable("the database is unavailable and this instance has not read this payload since it started"),
          },
        }),
        async () => {
          const { value, age } = await cached();
          return jsonText(value, 200, ageHeader(age));
        },
      );
    }
  }
}
