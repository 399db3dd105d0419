import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url);
const migrations = readdirSync(new URL("supabase/migrations/", root)).filter((file) => file.endsWith(".sql")).sort();

/** The last migration that creates or replaces `cadence.<name>`: where its live body is. */
function liveBody(name: string): string | undefined {
  const defines = new RegExp(`create (or replace )?function cadence\\.${name}\\(`);
  return migrations.filter((file) => defines.test(readFileSync(new URL(`supabase/migrations/${file}`, root), "utf8"))).at(-1);
}

/** The index's rows: each function it names, and the migration it says holds its live body. */
function indexRows(): Array<{ name: string; migration: string }> {
  const text = readFileSync(new URL("sql/README.md", root), "utf8");
  const section = text.slice(text.indexOf("## Where each rule lives"), text.indexOf("## supabase-shim.sql"));
  return section.split("\n").filter((line) => line.startsWith("| ") && line.includes("cadence.")).flatMap((line) => {
    const cells = line.split("|").map((cell) => cell.trim());
    const migration = cells[3].replaceAll("`", "");
    return [...cells[2].matchAll(/cadence\.([a-z_]+)/g)].map(([, name]) => ({ name, migration }));
  });
}

describe("sql/README.md: where each rule lives", () => {
  it("names, for every function it lists, the migration that defines its live body", () => {
    const rows = indexRows();
    expect(rows.length).toBeGreaterThan(10);
    for (const { name, migration } of rows) expect(liveBody(name), name).toBe(migration);
  });
});

describe("sql/schema.sql: the functions", () => {
  it("each carry a comment", () => {
    const schema = readFileSync(new URL("sql/schema.sql", root), "utf8");
    const names = (pattern: RegExp) => new Set([...schema.matchAll(pattern)].map(([, name]) => name));
    const defined = names(/^CREATE FUNCTION ([a-z_]+\.[a-z_]+)\(/gm);
    const commented = names(/^COMMENT ON FUNCTION ([a-z_]+\.[a-z_]+)\(/gm);
    expect([...defined].filter((name) => !commented.has(name))).toEqual([]);
    expect(defined.size).toBeGreaterThan(30);
  });
});
