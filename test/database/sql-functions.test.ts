import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../support/database.ts";

/** Each concern's pgTAP file, beside the schema file it tests (supabase/tests/<concern>.test.sql). */
const TESTS = new URL("../../supabase/tests/", import.meta.url).pathname;
const files = readdirSync(TESTS).filter((name) => name.endsWith(".test.sql")).sort();

const PG_PROVE = "/usr/bin/pg_prove";
const INSTALL = "apt-get install -y libtap-parser-sourcehandler-pgtap-perl postgresql-client-15, and pgTAP's files as .ci/run unpacks them";

/** pg_prove over one file: its exit status and everything it printed (the failing tests' names and diagnostics). */
function prove(url: string, file: string): Promise<{ status: number; output: string }> {
  const { hostname, port, pathname } = new URL(url);
  const args = ["--host", hostname, "--port", port, "--username", "postgres", "--dbname", pathname.slice(1), "--verbose", join(TESTS, file)];
  return new Promise((resolve) => {
    execFile(PG_PROVE, args, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ status: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/** The lines of pg_prove's output that say what failed: each `not ok` test with its diagnostics, and pgTAP's plan complaints. */
function failures(output: string): string {
  return output.split("\n").filter((line) => /^(not ok|#|Failed|Parse errors|psql:)/.test(line.trim())).join("\n");
}

describe("the SQL functions' own tests (pgTAP, supabase/tests)", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    if (!existsSync(PG_PROVE)) throw new Error(`pg_prove is missing: ${INSTALL}`);
    // A copy of the migrated template, as every suite gets; pgTAP in its own schema, as Supabase installs it.
    database = await freshDatabase({ max: 1 });
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      await sql.unsafe("create schema if not exists extensions; create extension if not exists pgtap with schema extensions");
    } catch (error) {
      throw new Error(`pgTAP is missing (${String(error)}): ${INSTALL}`);
    } finally {
      await sql.end();
    }
  });
  afterAll(() => database?.drop());

  for (const file of files) {
    it(`${file.replace(/\.test\.sql$/, "")}: every test of ${file} passes`, async () => {
      const { status, output } = await prove(database.url, file);
      expect(status, `pg_prove ${file} failed:\n${failures(output)}`).toBe(0);
    });
  }

  it("names every function of the schemas cadence and public in a has_function of some file", async () => {
    const named = new Set<string>();
    for (const file of files) {
      for (const match of readFileSync(join(TESTS, file), "utf8").matchAll(/has_function\(\s*'(\w+)'\s*,\s*'(\w+)'/g)) {
        named.add(`${match[1]}.${match[2]}`);
      }
    }
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      const functions = await sql<{ name: string }[]>`
        select n.nspname || '.' || p.proname as name
          from pg_catalog.pg_proc as p join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
         where n.nspname in ('cadence', 'public')
         order by 1`;
      const untested = functions.map((f) => f.name).filter((name) => !named.has(name));
      expect(untested, "functions without a test in supabase/tests").toEqual([]);
    } finally {
      await sql.end();
    }
  });
});
