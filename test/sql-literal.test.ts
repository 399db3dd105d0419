import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../functions/app/db/database.ts";
import { openPostgres } from "../functions/app/db/postgres.ts";
import { sqlLiteral, withValuesInline } from "../functions/app/db/sql-literal.ts";
import { freshDatabase, type TestDatabase } from "./support/database.ts";

/** Text that breaks naive quoting: quotes of both kinds, backslashes, array syntax, a placeholder, non-ASCII. */
const AWKWARD = [
  "it's",
  "''",
  "\\",
  "a\\'b",
  'say "hi"',
  "{a,b}",
  "NULL",
  "$1",
  "E'x'",
  "ünïcødé ✓ 🎧",
  "line\nbreak\ttab",
  "'); drop table cadence.accounts; --",
  "",
];

describe("statements without prepared statements (the transaction pooler's path)", () => {
  let database: TestDatabase;
  let inline: Database;
  let prepared: Database;

  beforeAll(async () => {
    database = await freshDatabase();
    inline = openPostgres(database.url, { max: 1, prepare: false });
    prepared = openPostgres(database.url, { max: 1, prepare: true });
  });
  afterAll(async () => {
    await inline.close();
    await prepared.close();
    await database.drop();
  });

  it("reads every value back exactly as the parameter would be read", async () => {
    for (const value of AWKWARD) {
      const [fromInline] = await inline.query<{ value: string }>("select $1::text as value", [value]);
      const [fromParameter] = await prepared.query<{ value: string }>("select $1::text as value", [value]);
      expect(fromInline.value).toBe(value);
      expect(fromParameter.value).toBe(value);
    }
  });

  it("reads arrays back element by element, nulls included", async () => {
    const values = [...AWKWARD, null];
    const rows = await inline.query<{ value: string | null }>(
      "select value from unnest($1::text[]) with ordinality as element(value, n) order by n",
      [values],
    );
    expect(rows.map((row) => row.value)).toEqual(values);
  });

  it("resolves an untyped value from its context, as an untyped parameter", async () => {
    const [row] = await inline.query<{ sum: number; same: boolean }>(
      "select $1::int + 1 as sum, $2 = 'DEMO-0000-0000-0001'::text as same",
      [41, "DEMO-0000-0000-0001"],
    );
    expect(row).toEqual({ sum: 42, same: true });
  });

  it("never runs a second statement smuggled in a value", async () => {
    const smuggled = "x'; delete from public.accounts; --";
    const [{ count: before }] = await prepared.query<{ count: string }>("select count(*) from public.accounts");
    const [row] = await inline.query<{ value: string }>("select $1::text as value", [smuggled]);
    expect(row.value).toBe(smuggled);
    const [{ count: after }] = await prepared.query<{ count: string }>("select count(*) from public.accounts");
    expect(Number(before)).toBeGreaterThan(0);
    expect(after).toBe(before);
  });

  it("refuses a value it cannot write: a NUL character, a non-finite number, a boolean", () => {
    expect(() => sqlLiteral("a\0b")).toThrow(TypeError);
    expect(() => sqlLiteral(Number.NaN)).toThrow(TypeError);
    expect(() => sqlLiteral(true)).toThrow(TypeError);
    expect(() => sqlLiteral({})).toThrow(TypeError);
  });

  it("replaces placeholders only, never inside a quoted string or identifier, and refuses a missing value", () => {
    expect(withValuesInline(`select '$1', "$1", $1, $10`, [..."abcdefghij"])).toBe(`select '$1', "$1", E'a', E'j'`);
    expect(() => withValuesInline("select $2", ["only one"])).toThrow(RangeError);
  });
});
