import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { PG_CLIENT_BIN } from "./postgres-server.ts";

/** One object of a dump, as pg_dump heads it: `-- Name: ...; Type: ...; Schema: ...`. */
export interface DumpEntry {
  /** pg_dump's own heading of the object (name, type, schema), unique within a dump. */
  heading: string;
  name: string;
  type: string;
  /** The statements that make it, as pg_dump prints them. */
  sql: string;
}

/**
 * The schema of the database at `url`: our two schemas, `public` and `cadence` (not the shim's
 * `auth` stand-in, which Supabase replaces with its own, nor the CLI's `supabase_migrations` ledger),
 * with their comments and grants (the API roles' access is part of the design), without owners or
 * the lines that differ from one dump or machine to the next.
 *
 * @example
 * const text = dumpSchema(url);
 */
export function dumpSchema(url: string): string {
  const dump = execFileSync(
    join(PG_CLIENT_BIN, "pg_dump"),
    ["--schema-only", "--no-owner", "--schema=public", "--schema=cadence", url],
    { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  return dump
    .split("\n")
    // \restrict and \unrestrict carry a random key each run; the version lines name the minor release.
    .filter((line) => !/^\\(un)?restrict /.test(line) && !/^-- Dumped (from database|by pg_dump) version /.test(line))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n\n");
}

const heading = /\n--\n-- Name: (.*?); Type: (.*?); Schema: (.*?); Owner: -\n--\n/g;

/**
 * The objects of a dump by their heading. pg_dump orders objects by kind and name, breaking ties
 * by creation order (OIDs), and lists an object's grants in the order they were given: neither is
 * part of the schema, so entries are keyed by heading and a grant block's lines are sorted.
 *
 * @example
 * const objects = dumpEntries(dumpSchema(url));
 */
export function dumpEntries(dump: string): Map<string, DumpEntry> {
  const entries = new Map<string, DumpEntry>();
  const found = [...dump.matchAll(heading)];
  found.forEach((match, n) => {
    const [, name, type, schema] = match;
    const end = found[n + 1]?.index ?? dump.length;
    let sql = dump.slice(match.index + match[0].length, end).replace(/--\n-- PostgreSQL database dump complete\n--/, "").trim();
    if (type === "ACL" || type === "DEFAULT ACL") sql = sql.split("\n").sort().join("\n");
    const key = `${name} (${type}, schema ${schema})`;
    entries.set(key, { heading: key, name, type, sql });
  });
  return entries;
}
