import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { freshDatabase } from "../support/database.ts";
import { dumpSchema, REGENERATE_SCHEMA_SNAPSHOT, SCHEMA_SNAPSHOT } from "../support/schema-snapshot.ts";

describe("sql/schema.sql", () => {
  it("is the schema the migrations make, dumped from a copy of the migrated template", async () => {
    const database = await freshDatabase({ max: 1 });
    try {
      // Received (+) is what the migrations make now; expected (-) what sql/schema.sql holds.
      const snapshot = readFileSync(SCHEMA_SNAPSHOT, "utf8");
      expect(dumpSchema(database.url), `sql/schema.sql differs from the migrations: run \`${REGENERATE_SCHEMA_SNAPSHOT}\``).toBe(snapshot);
    } finally {
      await database.drop();
    }
  });
});
