import { readFileSync } from "node:fs";
import { describe, expect, inject, it } from "vitest";
import { freshDatabase } from "../support/database.ts";
import { dumpEntries, dumpSchema, type DumpEntry } from "../support/schema-dump.ts";
import { declaredDatabase, SCHEMA_DIR, schemaFiles } from "../support/schema-files.ts";

/** The name a schema file spells for the object of a dump entry (a grant's or comment's object). */
function spelledName({ type, name }: DumpEntry): string {
  const object = type === "COMMENT" || type === "ACL" ? name.slice(name.indexOf(" ") + 1) : name;
  if (type === "POLICY") return name.slice(name.indexOf(" ") + 1);
  if (["TRIGGER", "CONSTRAINT", "FK CONSTRAINT"].includes(type)) return name.split(" ")[1];
  return object.replace(/\(.*$/, "").split(".")[0].replaceAll('"', "");
}

/** The schema files that declare the entry's object: where a change to it is made. */
function declaringFiles(entry: DumpEntry): string[] {
  const name = spelledName(entry).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const statement = entry.type === "ACL" || entry.type === "DEFAULT ACL"
    ? new RegExp(`^(grant|revoke)\\b.*\\b${name}\\b`, "im")
    : entry.type === "COMMENT"
    ? new RegExp(`^comment on .*\\b${name}\\b`, "im")
    : new RegExp(`\\b${name}\\b`, "i");
  return schemaFiles().filter((file) => statement.test(readFileSync(new URL(file, SCHEMA_DIR), "utf8")));
}

describe("supabase/schemas", () => {
  it("make the database the migrations make: every object, column order, grant and comment", async () => {
    const migrated = await freshDatabase({ max: 1 });
    try {
      const declared = await declaredDatabase(inject("pgAdminUrl"));
      try {
        const fromMigrations = dumpEntries(dumpSchema(migrated.url));
        const fromFiles = dumpEntries(dumpSchema(declared.url));
        expect(fromMigrations.size).toBeGreaterThan(500);
        const differing = [...new Set([...fromMigrations.keys(), ...fromFiles.keys()])]
          .filter((key) => fromMigrations.get(key)?.sql !== fromFiles.get(key)?.sql)
          .sort();
        const report = differing.map((key) => {
          const entry = (fromFiles.get(key) ?? fromMigrations.get(key))!;
          const where = !fromFiles.has(key) ? "only the migrations make it" : !fromMigrations.has(key) ? "only the schema files make it" : "differs";
          const files = declaringFiles(entry).map((file) => `supabase/schemas/${file}`);
          return `  ${key}: ${where}; edit ${files.length ? files.join(" or ") : "the schema file of its concern"}`;
        });
        // Expected (-) is what the migrations make, received (+) what the schema files make.
        expect(
          Object.fromEntries(differing.map((key) => [key, fromFiles.get(key)?.sql])),
          `supabase/schemas and supabase/migrations make different databases. A change is an edit to the schema file and a new migration (supabase/README.md, "Changing the schema"):\n${report.join("\n")}\n`,
        ).toEqual(Object.fromEntries(differing.map((key) => [key, fromMigrations.get(key)?.sql])));
      } finally {
        await declared.drop();
      }
    } finally {
      await migrated.drop();
    }
  });
});
