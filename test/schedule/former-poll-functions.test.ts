import { describe, expect, it } from "vitest";
import { scopedDatabase } from "../support/database.ts";

const KEYS = ["DEMO-0000-0000-0001", "DEMO-0000-0000-0002", "DEMO-0000-0000-0004", "NONE-0000-0000-0000"];
const EMAILS = ["demo@example.com", "demo@example.com", "other@example.com", "nobody@example.com"];

describe("the poll functions an API deployed before 20261126000400 calls (*_schedules_if_changed)", () => {
  const database = scopedDatabase();
  const rows = (text: string, params: unknown[]) => database.db.query<Record<string, unknown>>(text, params);

  it("answer as cadence.license_schedules_unless_held, their version named fingerprint", async () => {
    const [{ version }] = await database.db.query<{ version: string }>(
      "select version from cadence.license_schedules_unless_held(array[$1], array[null]) as s",
      [KEYS[0]],
    );
    // One key whose version the caller holds (no payload), the others without.
    const held = [version, null, null, null];
    const current = await rows("select s.n, s.version, s.payload::text from cadence.license_schedules_unless_held($1::text[], $2::text[]) as s order by s.n", [KEYS, held]);
    const former = await rows("select s.n, s.fingerprint as version, s.payload::text from cadence.license_schedules_if_changed($1::text[], $2::text[]) as s order by s.n", [KEYS, held]);
    expect(current).toHaveLength(3);
    expect(current[0].payload).toBeNull();
    expect(former).toEqual(current);
  });

  it("answer as cadence.legacy_schedules_unless_held, their version named fingerprint", async () => {
    const held = [null, null, null, null];
    const current = await rows("select s.n, s.outcome, s.version, s.payload::text from cadence.legacy_schedules_unless_held($1::text[], $2::text[], $3::text[]) as s order by s.n", [KEYS, EMAILS, held]);
    const former = await rows("select s.n, s.outcome, s.fingerprint as version, s.payload::text from cadence.legacy_schedules_if_changed($1::text[], $2::text[], $3::text[]) as s order by s.n", [KEYS, EMAILS, held]);
    expect(current.map((row) => row.outcome)).toEqual(["paired", "paired", "paired", "key_not_found"]);
    expect(former).toEqual(current);
  });
});
