import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Proclamation } from "../../functions/app/catalogue/schemas.ts";
import { aloneAndTogether } from "../support/simultaneous.ts";
import { testClock } from "../support/clock.ts";
import { suiteApp } from "../support/suite.ts";

// A clock that stands still: the failed-pairing probe's 1,000 requests fall in one minute window,
// however slow the machine.
const suite = suiteApp({ now: testClock().now });

const names = (items: Array<{ name: string }>) => items.map((item) => item.name).sort();

async function proclamations(headers: Record<string, string> = {}) {
  const response = await suite.request("/api/v2/proclamations", { headers });
  return { status: response.status, body: await response.json() };
}

describe("GET /api/v2/proclamations", () => {
  it("returns all proclamations when neither header is given", async () => {
    const { status, body } = await proclamations();
    expect(status).toBe(200);
    expect(names(z.array(Proclamation).parse(body))).toEqual(["Abundance", "Clarity", "Grounding", "Peace"]);
  });

  it("leaves out proclamations whose frequency has no canonical id (936 Hz)", async () => {
    const { body } = await proclamations();
    expect(names(body)).not.toContain("Legacy Tone");
    const entitled = await proclamations({ "x-license-key": "DEMO-0000-0000-0001", "x-email": "demo@example.com" });
    expect(names(entitled.body)).not.toContain("Legacy Tone");
  });

  it("gives each proclamation its canonical frequency id and embedded colorPalette", async () => {
    const items = z.array(Proclamation).parse((await proclamations()).body);
    const byName = Object.fromEntries(items.map((item) => [item.name, item]));
    expect(byName.Abundance.solfeggioFrequencyId).toBe(5);
    expect(byName.Peace.solfeggioFrequencyId).toBe(6);
    expect(byName.Clarity.solfeggioFrequencyId).toBe(7);
    expect(byName.Grounding.solfeggioFrequencyId).toBe(1);
    const palettes = await (await suite.request("/api/v2/color-palettes")).json();
    for (const item of items) {
      expect(item.colorPalette).toEqual(palettes[item.solfeggioFrequencyId - 1].colors);
    }
  });

  it("returns only those assigned to the matching user when both headers are given", async () => {
    const demo = await proclamations({ "x-license-key": "DEMO-0000-0000-0001", "x-email": "demo@example.com" });
    expect(demo.status).toBe(200);
    expect(names(z.array(Proclamation).parse(demo.body))).toEqual(["Abundance", "Clarity", "Peace"]);
    const other = await proclamations({ "x-license-key": "DEMO-0000-0000-0004", "x-email": "other@example.com" });
    expect(names(other.body)).toEqual(["Grounding"]);
  });

  it("pairs a key with no user link through its stored e-mail, case-insensitively", async () => {
    const legacy = await proclamations({ "x-license-key": "DEMO-0000-0000-0005", "x-email": "legacy@example.com" });
    expect(legacy).toEqual({ status: 200, body: [] });
  });

  it("answers 400 not-authorized when only one header is given", async () => {
    expect(await proclamations({ "x-license-key": "DEMO-0000-0000-0001" })).toEqual({ status: 400, body: { message: "not-authorized" } });
    expect(await proclamations({ "x-email": "demo@example.com" })).toEqual({ status: 400, body: { message: "not-authorized" } });
  });

  it("answers 400 not-authorized for an invalid pair (malformed, unknown key or unknown user)", async () => {
    for (const headers of [
      { "x-license-key": "demo-0000-0000-0001", "x-email": "demo@example.com" },
      { "x-license-key": "DEMO-0000-0000-0001", "x-email": "not-an-email" },
      { "x-license-key": "ZZZZ-0000-0000-0001", "x-email": "demo@example.com" },
      { "x-license-key": "DEMO-0000-0000-0001", "x-email": "nobody@example.com" },
    ]) {
      expect(await proclamations(headers)).toEqual({ status: 400, body: { message: "not-authorized" } });
    }
  });

  it("answers 400 this key doesn't appear to belong to you when the key is another user's", async () => {
    expect(await proclamations({ "x-license-key": "DEMO-0000-0000-0004", "x-email": "demo@example.com" })).toEqual({
      status: 400,
      body: { message: "this key doesn't appear to belong to you" },
    });
  });

  it("answers each of many simultaneous entitled reads as it answers that read alone", async () => {
    const reads = [
      ["DEMO-0000-0000-0001", "demo@example.com"],
      ["DEMO-0000-0000-0004", "other@example.com"],
      ["DEMO-0000-0000-0005", "legacy@example.com"],
      ["DEMO-0000-0000-0001", "other@example.com"],
      ["DEMO-0000-0000-0001", "nobody@example.com"],
      ["ZZZZ-0000-0000-0000", "demo@example.com"],
    ].map(([key, email]) => () => suite.request("/api/v2/proclamations", { headers: { "x-license-key": key, "x-email": email } }));
    const { alone, together } = await aloneAndTogether(reads, 8);
    expect(alone.map((answer) => answer.status)).toEqual([200, 200, 200, 400, 400, 400]);
    together.forEach((answers, at) => expect(answers).toEqual(answers.map(() => alone[at])));
  });

  it("refuses failed pairings from one client past 10 a minute with 429 and Retry-After, while a valid pair from it keeps 200", async () => {
    const client = { "x-forwarded-for": "203.0.113.77" };
    const candidates = Array.from({ length: 1_000 }, (_, i) => (i % 100 === 7 ? "other@example.com" : `candidate${i}@example.com`));
    const probes: Record<number, number> = {};
    const kiosk: number[] = [];
    for (const [i, email] of candidates.entries()) {
      const answer = await suite.request("/api/v2/proclamations", { headers: { ...client, "x-license-key": "DEMO-0000-0000-0001", "x-email": email } });
      probes[answer.status] = (probes[answer.status] ?? 0) + 1;
      if (answer.status === 429) expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      await answer.body?.cancel();
      if (i % 100 === 0) {
        const own = await suite.request("/api/v2/proclamations", { headers: { ...client, "x-license-key": "DEMO-0000-0000-0001", "x-email": "demo@example.com" } });
        kiosk.push(own.status);
      }
    }
    console.log(`1,000-e-mail probe from one address: ${JSON.stringify(probes)}; the valid pair from it: ${kiosk.length} reads, statuses ${[...new Set(kiosk)]}`);
    expect(probes).toEqual({ 400: 10, 429: 990 });
    expect(kiosk).toEqual(Array(10).fill(200));
  });
});
