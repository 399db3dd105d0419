import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Category, ColorPalette, Frequency, Group } from "../../functions/app/catalogue/schemas.ts";
import { testApp } from "../support/app.ts";
import { scopedDatabase } from "../support/database.ts";
import { suiteApp } from "../support/suite.ts";

const suite = suiteApp();

async function body(path: string) {
  const response = await suite.request(path);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("application/json");
  return { text: await response.clone().text(), value: await response.json() };
}

describe("GET /api/v2/categories", () => {
  it("returns an array of Category", async () => {
    const { value } = await body("/api/v2/categories");
    expect(z.array(Category).parse(value)).toEqual([
      { id: 1, name: "Affirmations", sortOrder: 1 },
      { id: 2, name: "Meditations", sortOrder: 2 },
    ]);
  });

  it("has the alias /api/v2/proclamation-categories with an identical payload", async () => {
    expect((await body("/api/v2/proclamation-categories")).text).toBe((await body("/api/v2/categories")).text);
  });
});

describe("GET /api/v2/groups", () => {
  it("returns an array of Group, ordered by sortOrder ascending", async () => {
    const { value } = await body("/api/v2/groups");
    const groups = z.array(Group).parse(value);
    expect(groups.map((group) => group.sortOrder)).toEqual([1, 2, 3]);
    expect(groups.map((group) => group.id)).toEqual([3, 1, 2]);
  });

  it("has the alias /api/v2/proclamation-groups with an identical payload", async () => {
    expect((await body("/api/v2/proclamation-groups")).text).toBe((await body("/api/v2/groups")).text);
  });
});

describe("GET /api/v2/frequencies", () => {
  it("returns exactly 9 Frequency items with ids 1 to 9 and the canonical Hz values", async () => {
    const frequencies = z.array(Frequency).parse((await body("/api/v2/frequencies")).value);
    expect(frequencies.map((f) => [f.id, f.value])).toEqual([
      [1, 174], [2, 285], [3, 396], [4, 417], [5, 528], [6, 639], [7, 741], [8, 852], [9, 963],
    ]);
  });
});

describe("GET /api/v2/color-palettes", () => {
  it("returns exactly 9 ColorPalette items, one per id 1 to 9, of seven colours", async () => {
    const palettes = z.array(ColorPalette).parse((await body("/api/v2/color-palettes")).value);
    expect(palettes.map((p) => p.solfeggioFrequencyId)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const palette of palettes) expect(palette.colors).toHaveLength(7);
  });

  const stored = scopedDatabase();
  it("serves a stored palette row in place of the built-in one", async () => {
    await stored.db.query("insert into public.color_palettes (canonical_frequency_id, colors) values (3, $1)", [["#000000", "#FFFFFF"]]);
    const palettes = z.array(ColorPalette).parse(await (await testApp(stored.db).request("/api/v2/color-palettes")).json());
    expect(palettes).toHaveLength(9);
    expect(palettes[2]).toEqual({ solfeggioFrequencyId: 3, colors: ["#000000", "#FFFFFF"] });
    expect(palettes[1].colors).toHaveLength(7);
  });
});

describe("the catalogue's JSON", () => {
  it("is compact on every catalogue route, as on every other route", async () => {
    for (const path of ["/api/v2/categories", "/api/v2/groups", "/api/v2/frequencies", "/api/v2/color-palettes", "/api/v2/proclamations"]) {
      const { text, value } = await body(path);
      expect(text, path).toBe(JSON.stringify(value));
    }
  });
});
