import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "./support/database.ts";

let database: TestDatabase;

beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(() => database.drop());

const rollback = new Error("rollback");
const apiRoles = ["anon", "authenticated"] as const;

/** Every table, view and function we own, enumerated from the catalog so later ones are covered. */
async function ourRelations() {
  return database.db.query<{ name: string; kind: string }>(`
    select format('%I.%I', n.nspname, c.relname) as name, c.relkind::text as kind
    from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where c.relkind in ('r', 'v', 'm', 'p', 'f') and n.nspname in ('public', 'cadence')`);
}

describe("row-level security and privileges", () => {
  it("has row-level security on for every table", async () => {
    const tables = await database.db.query<{ name: string; rls: boolean }>(`
      select format('%I.%I', n.nspname, c.relname) as name, c.relrowsecurity as rls
      from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p') and n.nspname in ('public', 'cadence')`);
    expect(tables.length).toBeGreaterThan(5);
    expect(tables.filter((table) => !table.rls)).toEqual([]);
  });

  for (const role of apiRoles) {
    it(`gives ${role} no privilege on any table or view`, async () => {
      const relations = await ourRelations();
      const granted = [];
      for (const { name } of relations) {
        for (const privilege of ["select", "insert", "update", "delete", "truncate", "references", "trigger"]) {
          const [row] = await database.db.query<{ ok: boolean }>("select has_table_privilege($1, $2, $3) as ok", [role, name, privilege]);
          if (row.ok) granted.push(`${privilege} on ${name}`);
        }
      }
      expect(granted).toEqual([]);
    });

    it(`lets ${role} execute none of our functions`, async () => {
      const granted = await database.db.query<{ name: string }>(
        `select p.oid::regprocedure::text as name
         from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
         where n.nspname in ('public', 'cadence') and has_function_privilege($1, p.oid, 'execute')`,
        [role],
      );
      expect(granted).toEqual([]);
    });

    it(`reads no row of any table as ${role}, even if select were granted by mistake`, async () => {
      const relations = (await ourRelations()).filter((relation) => relation.kind === "r");
      const sql = postgres(database.url, { max: 1, onnotice: () => {} });
      const visible: string[] = [];
      try {
        for (const { name } of relations) {
          await sql
            .begin(async (tx) => {
              await tx.unsafe(`grant select on ${name} to ${role}`);
              await tx.unsafe(`set local role ${role}`);
              const [row] = await tx.unsafe(`select count(*)::int as count from ${name}`);
              if (row.count > 0) visible.push(`${row.count} rows of ${name}`);
              throw rollback;
            })
            .catch((error) => {
              if (error !== rollback) throw error;
            });
        }
      } finally {
        await sql.end();
      }
      expect(visible).toEqual([]);
    });
  }
});
