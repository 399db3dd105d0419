import { createRoute, z } from "@hono/zod-openapi";
import { Proclamation } from "../catalogue/schemas.ts";
import { ErrorMessage } from "../http/error-message.ts";
import { readCatalogue } from "../catalogue/store.ts";
import type { Deps } from "../deps.ts";
import { Failure } from "../errors.ts";
import { jsonText } from "../http/json.ts";
import { type App, jsonContent, route } from "../http/route.ts";
import { ageHeader } from "../http/age-header.ts";
import { oldest } from "../read-path/last-known-good.ts";
import { headerSchemes } from "../http/openapi-security.ts";
import { databaseUnavailable, rateLimited, withAge } from "../http/openapi-responses.ts";
import type { ReadPath } from "../read-path/read-path.ts";
import { sightingRecorder } from "../kiosk/record-sighting.ts";
import { LicenseKey } from "../license-key.ts";
import { Email } from "../email.ts";
import { requirePaired } from "../pairing.ts";
import { indexProclamations, subsetBody } from "./served.ts";
import { type Entitlement, readEntitlements } from "./store.ts";
import { LICENSE_PAIR_SCHEMES } from "./license-pair-schemes.ts";
import { limitFailedPairings } from "../rate-limit/failed-pairings.ts";

const ProclamationHeaders = z.object({
  "x-license-key": LicenseKey.optional(),
  "x-email": Email.optional(),
});

/**
 * Section 4.2: all proclamations, or with `x-license-key` and `x-email` only those entitled. The
 * pairing and the assignments are read on every request; the proclamations themselves come from
 * the catalogue cache, so an edit to one reaches entitled reads as quickly as the full list.
 */
export function proclamationRoutes(app: App, deps: Deps, readPath: ReadPath): void {
  const together = headerSchemes(app, LICENSE_PAIR_SCHEMES);
  const seen = sightingRecorder(deps);
  const served = readPath.catalogue(async () => indexProclamations(await readCatalogue(deps.db, "proclamations")));
  // A kiosk read: batched while a statement runs, and the last entitlement answered per key and
  // e-mail served during a database outage: 10,000 pairs of a few ids each, at most 4 MiB of ids.
  const entitlements = readPath.byKey({
    batch: (reads: Array<{ key: string; email: string }>, options) => readEntitlements(deps.db, reads, options),
    identity: ({ key, email }) => `${key}\n${email}`,
    lastKnownGood: {
      capacity: 10_000,
      maxBytes: 4 << 20,
      sizeOf: (known: Entitlement | null) => (known?.ids ?? []).reduce((bytes, id) => bytes + id.length + 16, 0),
      keep: (known: Entitlement | null) => known?.outcome === "paired" && known.ids !== null,
    },
  });
  app.use("/api/v2/proclamations", limitFailedPairings(deps));
  route(
    app,
    createRoute({
      method: "get",
      path: "/api/v2/proclamations",
      operationId: "listProclamations",
      summary: "Proclamations: all, or the subset entitled to a license key's owner",
      tags: ["catalogue"],
      // The paired headers are the security schemes licenseKey and accountEmail: neither, or both.
      security: [together(), together("licenseKey", "accountEmail")],
      responses: {
        200: withAge(jsonContent(z.array(Proclamation), "Proclamations with canonical frequency ids")),
        400: jsonContent(ErrorMessage, "`not-authorized` or `this key doesn't appear to belong to you`"),
        // Not the contract's: more than 10 failed pairings a minute from one client (rate-limit/failed-pairings.ts).
        429: rateLimited,
        503: databaseUnavailable(
          "the database is unavailable and this instance has no last known answer: it never read the whole list, or never read this key and e-mail's entitlement",
        ),
      },
    }),
    async (c) => {
      const key = c.req.header("x-license-key");
      const email = c.req.header("x-email");
      if (key === undefined && email === undefined) {
        const all = await served();
        return jsonText(all.value.body, 200, ageHeader(all.age));
      }
      if (key === undefined || email === undefined) throw new Failure("not_authorized");
      const headers = ProclamationHeaders.safeParse({ "x-license-key": key.trim(), "x-email": email.trim() });
      if (!headers.success) throw new Failure("not_authorized");
      const read = { key: headers.data["x-license-key"]!, email: headers.data["x-email"]! };
      const { value: entitlement, age } = await entitlements(`${read.key}\n${read.email}`, (entitled) => entitled(read));
      requirePaired(entitlement?.outcome);
      if (!entitlement?.ids) throw new Failure("not_authorized");
      seen(c, read.key);
      const all = await served();
      return jsonText(subsetBody(all.value, entitlement.ids), 200, ageHeader(oldest(age, all.age)));
    },
  );
}
