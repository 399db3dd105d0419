import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url);
const schemaDir = new URL("supabase/schemas/", root);
const schemaFiles = readdirSync(schemaDir).filter((file) => file.endsWith(".sql")).sort();

/** Every function the schema files declare (schema-qualified), with the file that declares it. */
function declaredFunctions(): Map<string, string> {
  const declared = new Map<string, string>();
  for (const file of schemaFiles) {
    const text = readFileSync(new URL(file, schemaDir), "utf8");
    for (const [, name] of text.matchAll(/^create (?:or replace )?function ((?:cadence|public)\.[a-z_]+)\(/gim)) declared.set(name, file);
  }
  return declared;
}

/** The index's rows: each function it names, and the schema file it says holds it. */
function indexRows(): Array<{ name: string; file: string }> {
  const text = readFileSync(new URL("sql/README.md", root), "utf8");
  const section = text.slice(text.indexOf("## Where each rule lives"), text.indexOf("## supabase-shim.sql"));
  return section.split("\n").filter((line) => /^\| .*`(cadence|public)\./.test(line)).flatMap((line) => {
    const cells = line.split("|").map((cell) => cell.trim());
    const file = cells[3].match(/\[([^\]]+)\]/)?.[1] ?? cells[3];
    return [...cells[2].matchAll(/`((?:cadence|public)\.[a-z_]+)`/g)].map(([, name]) => ({ name, file }));
  });
}

describe("sql/README.md: where each rule lives", () => {
  it("names every function of the schemas cadence and public", () => {
    const declared = declaredFunctions();
    expect(declared.size).toBeGreaterThan(70);
    const indexed = new Set(indexRows().map(({ name }) => name));
    expect([...declared.keys()].filter((name) => !indexed.has(name))).toEqual([]);
  });

  it("names, for every function it lists, the schema file that declares it", () => {
    const declared = declaredFunctions();
    for (const { name, file } of indexRows()) expect(file, name).toBe(declared.get(name));
  });
});

describe("supabase/schemas: the functions", () => {
  it("each carry a comment", () => {
    const text = schemaFiles.map((file) => readFileSync(new URL(file, schemaDir), "utf8")).join("\n");
    const commented = new Set([...text.matchAll(/^comment on function ((?:cadence|public)\.[a-z_]+)\(/gim)].map(([, name]) => name));
    expect([...declaredFunctions().keys()].filter((name) => !commented.has(name))).toEqual([]);
  });
});

describe("supabase/tests: each function's pgTAP test", () => {
  it("lives beside its schema file: supabase/tests/<concern>.test.sql for supabase/schemas/NN_<concern>.sql", () => {
    const testDir = new URL("supabase/tests/", root);
    const testedIn = new Map<string, string>();
    for (const file of readdirSync(testDir).filter((name) => name.endsWith(".test.sql"))) {
      const text = readFileSync(new URL(file, testDir), "utf8");
      for (const [, schema, name] of text.matchAll(/has_function\(\s*'(\w+)'\s*,\s*'(\w+)'/g)) testedIn.set(`${schema}.${name}`, file);
    }
    const misplaced = [...declaredFunctions()]
      .map(([name, file]) => ({ name, expected: file.replace(/^\d+_/, "").replace(/\.sql$/, ".test.sql"), actual: testedIn.get(name) }))
      .filter(({ expected, actual }) => expected !== actual);
    expect(misplaced).toEqual([]);
  });
});
