import { describe, expect, it } from "vitest";
import { CONFUSABLES_UNICODE_VERSION, lookAlikeSql, lookAlikes, UNHOMOGLYPH_VERSION } from "../support/system-name-look-alikes.ts";

// The look-alike tables of cadence.system_name_keys are generated
// from the npm package unhomoglyph (Unicode's confusables.txt); their behaviour on a real database is
// test/license/system-name.test.ts's and supabase/tests/system_name_look_alikes.test.sql's.

describe("supabase/schemas/04_system_name_look_alikes.sql", () => {
  it("is what test/support/system-name-look-alikes.ts generates from unhomoglyph's confusables.txt (npx vitest run --project unit test/license/system-name-look-alikes.test.ts -u rewrites it)", async () => {
    // Node's Unicode: the scripts of the presence tests and of each source (Unicode 17 on Node 20).
    expect(process.versions.unicode).toBe("17.0");
    await expect(lookAlikeSql()).toMatchFileSnapshot("../../supabase/schemas/04_system_name_look_alikes.sql");
  });

  it("reads the confusables.txt of Unicode 13.0.0 that unhomoglyph 1.0.6 carries: a new version is a new review of the table", () => {
    expect({ UNHOMOGLYPH_VERSION, CONFUSABLES_UNICODE_VERSION }).toEqual({ UNHOMOGLYPH_VERSION: "1.0.6", CONFUSABLES_UNICODE_VERSION: "13.0.0" });
  });

  it("replaces letters of another script only, never a look-alike within one script or a common character", () => {
    const small = new Map(lookAlikes("small").map((row) => [row.source, row.replacement]));
    const capitals = new Map(lookAlikes("capitals").map((row) => [row.source, row.replacement]));
    expect([small.get("\u043e"), small.get("\u03bf"), capitals.get("\u041e"), capitals.get("\u039f")]).toEqual(["o", "o", "O", "O"]);
    // Cyrillic В and Н are Latin B and H as capitals only; Cyrillic І is Latin I in capitals, i in small letters.
    expect([capitals.get("\u0412"), capitals.get("\u041d"), small.get("\u0432"), capitals.get("\u0406"), small.get("\u0456")])
      .toEqual(["B", "H", "\u0299", "I", "i"]);
    for (const within of ["m", "I", "l", "1", "0", "O", "|", "rn"]) {
      expect([small.get(within), capitals.get(within)], within).toEqual([undefined, undefined]);
    }
  });
});
