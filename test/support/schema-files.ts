import { readdirSync, readFileSync } from "node:fs";
import postgres from "postgres";

const root = new URL("../../", import.meta.url);

/** The directory of the declared schema (supabase/config.toml). */
export const SCHEMA_DIR = new URL("supabase/schemas/", root);

/** The schema files, in the lexical order the Supabase CLI applies them. */
export function schemaFiles(): string[] {
  return readdirSync(SCHEMA_DIR).filter((file) => file.endsWith(".sql")).sort();
}

/**
 * A new database in the cluster at `adminUrl` built from the schema files alone: the Supabase shim
 * (what Supabase itself provides), then each file of supabase/schemas in lexical order. A file that
 * fails stops it, with the file's name in the error.
 *
 * @example
 * const declared = await declaredDatabase(inject("pgAdminUrl"));
 * try { dumpSchema(declared.url); } finally { await declared.drop(); }
 */
export async function declaredDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `declared_${process.pid}_${Date.now()}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const drop = async () => {
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  };
  await admin.unsafe(`create database ${name}`);
  const url = adminUrl.replace(/\/postgres$/, `/${name}`);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(readFileSync(new URL("sql/supabase-shim.sql", root), "utf8"));
    for (const file of schemaFiles()) {
      try {
        await sql.unsafe(readFileSync(new URL(file, SCHEMA_DIR), "utf8"));
      } catch (error) {
        throw new Error(`supabase/schemas/${file}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  } catch (error) {
    await sql.end();
    await drop();
    throw error;
  }
  await sql.end();
  return { url, drop };
}
