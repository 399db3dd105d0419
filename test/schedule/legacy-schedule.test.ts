import { describe, expect, it } from "vitest";
import { expectedVersion } from "../support/expected-version.ts";
import { ScheduleResponse } from "../../functions/app/schedule/schemas.ts";
import { DEMO_DAILY, DEMO_WEEKLY, NO_SCHEDULE } from "../support/demo-schedules.ts";
import { aloneAndTogether } from "../support/simultaneous.ts";
import { suiteApp } from "../support/suite.ts";

const suite = suiteApp();

async function legacy(query: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await suite.request(`/api/v2/schedule?${new URLSearchParams(query)}`, { headers });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

const notAuthorized = { status: 400, body: { message: "not-authorized" } };
const notYours = { status: 400, body: { message: "this key doesn't appear to belong to you" } };
const outcome = ({ status, body }: { status: number; body: unknown }) => ({ status, body });

describe("GET /api/v2/schedule", () => {
  it("answers 200 with email and the whole payload: the account's daily schedule for DEMO-0000-0000-0001", async () => {
    const { status, body } = await legacy({ email: "demo@example.com", licenseKey: "DEMO-0000-0000-0001" });
    expect(status).toBe(200);
    expect(ScheduleResponse.parse(body)).toEqual({
      email: "demo@example.com",
      version: expectedVersion(DEMO_DAILY),
      ...DEMO_DAILY,
    });
  });

  it("serves blocks as the daily flattening: empty for the weekly schedule of DEMO-0000-0000-0002", async () => {
    const { status, body } = await legacy({ email: "demo@example.com", licenseKey: "DEMO-0000-0000-0002" });
    expect(status).toBe(200);
    expect(body).toEqual({ email: "demo@example.com", version: expectedVersion(DEMO_WEEKLY), ...DEMO_WEEKLY });
    expect(body.blocks).toEqual([]);
  });

  it("carries the same version as the license schedule read", async () => {
    const { body } = await legacy({ email: "demo@example.com", licenseKey: "DEMO-0000-0000-0002" });
    const license = await suite.request("/api/v2/licenses/DEMO-0000-0000-0002/schedule");
    expect(license.headers.get("etag")).toBe(`"${body.version}"`);
  });

  it("answers type null with empty lists for a user with no schedule", async () => {
    const { status, body } = await legacy({ email: "other@example.com", licenseKey: "DEMO-0000-0000-0004" });
    expect(status).toBe(200);
    expect(body).toEqual({ email: "other@example.com", version: expect.stringMatching(/^[0-9a-f]{64}$/), ...NO_SCHEDULE });
  });

  it("pairs a key with no user link through its stored e-mail, case-insensitively (DEMO-0000-0000-0005)", async () => {
    const { status, body } = await legacy({ email: "legacy@example.com", licenseKey: "DEMO-0000-0000-0005" });
    expect(status).toBe(200);
    expect(body).toEqual({ email: "legacy@example.com", version: expect.any(String), ...NO_SCHEDULE });
  });

  it("checks only the pairing: the inactive DEMO-0000-0000-0003 still reads its schedule", async () => {
    const { status, body } = await legacy({ email: "demo@example.com", licenseKey: "DEMO-0000-0000-0003" });
    expect(status).toBe(200);
    expect(body.type).toBe("daily");
  });

  it("accepts key in place of licenseKey", async () => {
    const { status, body } = await legacy({ email: "demo@example.com", key: "DEMO-0000-0000-0002" });
    expect(status).toBe(200);
    expect(body.type).toBe("weekly");
  });

  it("trims and lower-cases the e-mail, trims the key, and answers with the normalised e-mail", async () => {
    const { status, body } = await legacy({ email: "  Demo@Example.COM\t", licenseKey: " DEMO-0000-0000-0001 " });
    expect(status).toBe(200);
    expect(body.email).toBe("demo@example.com");
    expect(body.type).toBe("daily");
  });

  it("sends no ETag and never 304, even for a matching If-None-Match", async () => {
    const first = await legacy({ email: "demo@example.com", licenseKey: "DEMO-0000-0000-0001" });
    expect(first.headers.get("etag")).toBeNull();
    for (const value of [`"${first.body.version}"`, `W/"${first.body.version}"`, "*"]) {
      const again = await legacy({ email: "demo@example.com", licenseKey: "DEMO-0000-0000-0001" }, { "if-none-match": value });
      expect(again.status).toBe(200);
      expect(again.headers.get("etag")).toBeNull();
      expect(again.body).toEqual(first.body);
    }
  });

  it("answers 400 not-authorized when the e-mail or the key is missing", async () => {
    expect(outcome(await legacy({ licenseKey: "DEMO-0000-0000-0001" }))).toEqual(notAuthorized);
    expect(outcome(await legacy({ email: "demo@example.com" }))).toEqual(notAuthorized);
    expect(outcome(await legacy({ email: "", licenseKey: "DEMO-0000-0000-0001" }))).toEqual(notAuthorized);
    expect(outcome(await legacy({ email: "demo@example.com", licenseKey: "  " }))).toEqual(notAuthorized);
    expect(outcome(await legacy({}))).toEqual(notAuthorized);
  });

  it("accepts an e-mail of 254 characters and answers 400 not-authorized for 255", async () => {
    const local = "a".repeat(64);
    const email254 = `${local}@${"b".repeat(254 - 64 - 1 - 4)}.com`;
    expect(email254).toHaveLength(254);
    await suite.database.db.query(
      `with account as (insert into public.accounts (email, display_name) values ($1, 'Long') returning id)
       insert into public.license_keys (key, account_id, email) select 'LONG-0000-0000-0254', id, $1 from account`,
      [email254],
    );
    expect((await legacy({ email: email254, licenseKey: "LONG-0000-0000-0254" })).status).toBe(200);
    expect(outcome(await legacy({ email: `a${email254}`, licenseKey: "LONG-0000-0000-0254" }))).toEqual(notAuthorized);
  });

  it("answers 400 not-authorized for an e-mail not of the form text@text.text", async () => {
    for (const email of ["demo", "demo@example", "@example.com", "demo@.com", "demo@@example.com", "de mo@example.com"]) {
      expect({ email, ...outcome(await legacy({ email, licenseKey: "DEMO-0000-0000-0001" })) }).toEqual({ email, ...notAuthorized });
    }
  });

  it("answers 400 not-authorized for a malformed or unknown key", async () => {
    for (const licenseKey of ["demo-0000-0000-0001", "DEMO-0000-0000-001", "ZZZZ-0000-0000-0001"]) {
      expect({ licenseKey, ...outcome(await legacy({ email: "demo@example.com", licenseKey })) }).toEqual({ licenseKey, ...notAuthorized });
    }
  });

  it("answers 400 not-authorized for an unknown user", async () => {
    expect(outcome(await legacy({ email: "nobody@example.com", licenseKey: "DEMO-0000-0000-0001" }))).toEqual(notAuthorized);
  });

  it("answers 400 this key doesn't appear to belong to you when key and user exist but do not pair", async () => {
    expect(outcome(await legacy({ email: "demo@example.com", licenseKey: "DEMO-0000-0000-0004" }))).toEqual(notYours);
    expect(outcome(await legacy({ email: "other@example.com", licenseKey: "DEMO-0000-0000-0001" }))).toEqual(notYours);
    expect(outcome(await legacy({ email: "demo@example.com", licenseKey: "DEMO-0000-0000-0005" }))).toEqual(notYours);
  });

  it("rate limits each client IP to 10 requests a minute, before the credential checks", async () => {
    const ip = { "x-forwarded-for": "198.51.100.50" };
    for (let i = 0; i < 10; i++) expect((await legacy({}, ip)).status).toBe(400);
    const limited = await legacy({ email: "demo@example.com", licenseKey: "DEMO-0000-0000-0001" }, ip);
    expect(outcome(limited)).toEqual({ status: 429, body: { message: "too many requests" } });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await legacy({ email: "demo@example.com", licenseKey: "DEMO-0000-0000-0001" }, { "x-forwarded-for": "198.51.100.51" })).status).toBe(200);
  });

  it("answers each of many simultaneous reads as it answers that read alone", async () => {
    const reads = [
      { email: "demo@example.com", licenseKey: "DEMO-0000-0000-0001" },
      { email: "demo@example.com", licenseKey: "DEMO-0000-0000-0002" },
      { email: "legacy@example.com", licenseKey: "DEMO-0000-0000-0005" },
      { email: "other@example.com", licenseKey: "DEMO-0000-0000-0001" },
      { email: "nobody@example.com", licenseKey: "DEMO-0000-0000-0001" },
      { email: "demo@example.com", licenseKey: "ZZZZ-0000-0000-0000" },
    ].map((query) => () => suite.request(`/api/v2/schedule?${new URLSearchParams(query)}`));
    const { alone, together } = await aloneAndTogether(reads, 8);
    expect(alone.map((answer) => answer.status)).toEqual([200, 200, 200, 400, 400, 400]);
    together.forEach((answers, at) => expect(answers).toEqual(answers.map(() => alone[at])));
  });
});
