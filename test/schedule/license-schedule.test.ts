import { describe, expect, it } from "vitest";
import { SCHEDULE_CACHE_CONTROL } from "../../functions/app/schedule/routes.ts";
import { expectedVersion } from "../support/expected-version.ts";
import { SchedulePayload, WEEKDAYS } from "../../functions/app/schedule/schemas.ts";
import { DEMO_DAILY, DEMO_WEEKLY, NO_SCHEDULE } from "../support/demo-schedules.ts";
import { startServer } from "../support/server.ts";
import { memoryLimiter } from "../../functions/app/rate-limit/memory.ts";
import { testApp } from "../support/app.ts";
import { testClock } from "../support/clock.ts";
import { aloneAndTogether } from "../support/simultaneous.ts";
import { suiteApp } from "../support/suite.ts";

const suite = suiteApp();

const path = (key: string) => `/api/v2/licenses/${key}/schedule`;

async function read(key: string, headers: Record<string, string> = {}) {
  const response = await suite.request(path(key), { headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

async function currentVersion(key: string) {
  return (await read(key)).body.version as string;
}

const unknownLicense = { status: 404, body: { message: "unknown_license" } };

describe("GET /api/v2/licenses/{licenseKey}/schedule", () => {
  it("answers 200 with the SchedulePayload of the key's account: DEMO-0000-0000-0001 reads the daily schedule", async () => {
    const { status, headers, body } = await read("DEMO-0000-0000-0001");
    expect(status).toBe(200);
    expect(headers.get("content-type")).toMatch(/^application\/json/);
    expect(SchedulePayload.parse(body)).toEqual({ version: expectedVersion(DEMO_DAILY), ...DEMO_DAILY });
  });

  it("answers the key's own schedule first: DEMO-0000-0000-0002 reads its weekly schedule with all seven days", async () => {
    const { status, body } = await read("DEMO-0000-0000-0002");
    expect(status).toBe(200);
    expect(SchedulePayload.parse(body)).toEqual({ version: expectedVersion(DEMO_WEEKLY), ...DEMO_WEEKLY });
    expect(Object.keys(body.weekly)).toEqual([...WEEKDAYS]);
    expect(body.blocks).toEqual([]);
  });

  it("answers type null with empty lists and a non-empty version when there is no schedule", async () => {
    for (const key of ["DEMO-0000-0000-0004", "DEMO-0000-0000-0005"]) {
      const { status, body } = await read(key);
      expect(status).toBe(200);
      expect(body).toEqual({ version: expect.stringMatching(/^[0-9a-f]{64}$/), ...NO_SCHEDULE });
    }
  });

  it("needs no credential beyond the key: an inactive key still reads its schedule", async () => {
    const { status, body } = await read("DEMO-0000-0000-0003");
    expect(status).toBe(200);
    expect(body.type).toBe("daily");
  });

  it("sends ETag equal to the version in double quotes, and Cache-Control no-cache", async () => {
    const { headers, body } = await read("DEMO-0000-0000-0002");
    expect(headers.get("etag")).toBe(`"${body.version}"`);
    expect(headers.get("cache-control")).toBe(SCHEDULE_CACHE_CONTROL);
    expect(SCHEDULE_CACHE_CONTROL).toBe("no-cache");
  });

  it("answers 404 unknown_license for an unknown key", async () => {
    const { status, body } = await read("ZZZZ-0000-0000-0001");
    expect({ status, body }).toEqual(unknownLicense);
  });

  it("answers 404 unknown_license for a malformed key", async () => {
    for (const key of ["demo-0000-0000-0001", "DEMO-0000-0000-001", "DEMO00000000000001", "DEMO-0000-0000-0001%20", "%20DEMO-0000-0000-0001"]) {
      const { status, body } = await read(key);
      expect({ key, status, body }).toEqual({ key, ...unknownLicense });
    }
  });

  it("rate limits each client IP to 10 requests a minute, before looking at the key", async () => {
    // The limiter's clock stands still, so the 11 requests share one window: on the real clock the
    // minute could turn between them, and a fixed window counts from zero again there.
    const limited = testApp(suite.database.db, { limiter: memoryLimiter(testClock().now) });
    const from = (key: string, ip: string) => limited.request(path(key), { headers: { "x-forwarded-for": ip } });
    for (let i = 0; i < 10; i++) expect((await from("ZZZZ-0000-0000-0001", "198.51.100.40")).status).toBe(404);
    const refused = await from("DEMO-0000-0000-0001", "198.51.100.40");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await from("DEMO-0000-0000-0001", "198.51.100.41")).status).toBe(200);
  });

  it("answers each of many simultaneous polls as it answers that poll alone", async () => {
    const version = await currentVersion("DEMO-0000-0000-0001");
    const polls = [
      ...["DEMO-0000-0000-0001", "DEMO-0000-0000-0002", "DEMO-0000-0000-0004", "ZZZZ-0000-0000-0000"].map((key) => () =>
        suite.request(path(key))
      ),
      () => suite.request(path("DEMO-0000-0000-0001"), { headers: { "if-none-match": `"${version}"` } }),
    ];
    const { alone, together } = await aloneAndTogether(polls, 8);
    expect(alone.map((answer) => answer.status)).toEqual([200, 200, 200, 404, 304]);
    together.forEach((answers, at) => expect(answers).toEqual(answers.map(() => alone[at])));
  });
});

describe("If-None-Match on the license schedule read", () => {
  it("answers 304 with no body, ETag and Cache-Control echoed, when it names the current ETag", async () => {
    const version = await currentVersion("DEMO-0000-0000-0001");
    const { status, headers, text } = await read("DEMO-0000-0000-0001", { "if-none-match": `"${version}"` });
    expect(status).toBe(304);
    expect(text).toBe("");
    expect(headers.get("etag")).toBe(`"${version}"`);
    expect(headers.get("cache-control")).toBe(SCHEDULE_CACHE_CONTROL);
  });

  it("compares weakly: W/\"<version>\" (as Supabase's edge proxy rewrites it) matches too", async () => {
    const version = await currentVersion("DEMO-0000-0000-0002");
    expect((await read("DEMO-0000-0000-0002", { "if-none-match": `W/"${version}"` })).status).toBe(304);
  });

  it("matches any tag of a list", async () => {
    const version = await currentVersion("DEMO-0000-0000-0001");
    for (const list of [`"a", "${version}"`, `W/"x",W/"${version}" , "y"`, ` , "${version}",`, `"a",\t"${version}"`]) {
      expect({ list, status: (await read("DEMO-0000-0000-0001", { "if-none-match": list })).status }).toEqual({ list, status: 304 });
    }
  });

  it("matches * when the key has a schedule payload, type null included", async () => {
    expect((await read("DEMO-0000-0000-0001", { "if-none-match": "*" })).status).toBe(304);
    expect((await read("DEMO-0000-0000-0004", { "if-none-match": " * " })).status).toBe(304);
  });

  it("answers 200 with the full payload when it does not match", async () => {
    const version = await currentVersion("DEMO-0000-0000-0001");
    const other = await currentVersion("DEMO-0000-0000-0002");
    for (const value of [`"${other}"`, version, `"${version.slice(1)}"`, `w/"${version}"`, `"${version}" "x"`, `"${version}`, "", `"${version}", *`]) {
      const { status, body, headers } = await read("DEMO-0000-0000-0001", { "if-none-match": value });
      expect({ value, status }).toEqual({ value, status: 200 });
      expect(body).toEqual({ version, ...DEMO_DAILY });
      expect(headers.get("etag")).toBe(`"${version}"`);
    }
  });

  it("answers 200 with the new payload once staff edit the schedule, 304 again for the new ETag", async () => {
    const old = await currentVersion("DEMO-0000-0000-0001");
    await suite.database.db.query(
      "update public.schedule_blocks set dynamic_audio = false where id = 'd0000000-0000-4000-8000-000000000002'",
    );
    try {
      const changed = await read("DEMO-0000-0000-0001", { "if-none-match": `"${old}"` });
      expect(changed.status).toBe(200);
      expect(changed.body.daily[1].dynamicAudio).toBe(false);
      expect(changed.body.version).not.toBe(old);
      expect((await read("DEMO-0000-0000-0001", { "if-none-match": changed.headers.get("etag") ?? "" })).status).toBe(304);
    } finally {
      await suite.database.db.query(
        "update public.schedule_blocks set dynamic_audio = true where id = 'd0000000-0000-4000-8000-000000000002'",
      );
    }
    expect(await currentVersion("DEMO-0000-0000-0001")).toBe(old);
  });

  it("still answers 404 for an unknown key, whatever If-None-Match says", async () => {
    const { status, body } = await read("ZZZZ-0000-0000-0001", { "if-none-match": "*" });
    expect({ status, body }).toEqual(unknownLicense);
  });
});

describe("CORS on the license schedule read (browser-based kiosks)", () => {
  it("answers the preflight, allowing If-None-Match", async () => {
    const response = await suite.request(path("DEMO-0000-0000-0001"), {
      method: "OPTIONS",
      headers: {
        origin: "https://kiosk.example",
        "access-control-request-method": "GET",
        "access-control-request-headers": "if-none-match",
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-allow-methods")).toMatch(/\bGET\b/);
    expect(response.headers.get("access-control-allow-headers")?.toLowerCase().split(/\s*,\s*/)).toContain("if-none-match");
  });

  it("exposes ETag to the page, on the 200 and on the 304", async () => {
    const origin = { origin: "https://kiosk.example" };
    const ok = await read("DEMO-0000-0000-0001", origin);
    const notModified = await read("DEMO-0000-0000-0001", { ...origin, "if-none-match": ok.headers.get("etag") ?? "" });
    for (const { headers } of [ok, notModified]) {
      expect(headers.get("access-control-allow-origin")).toBe("*");
      expect(headers.get("access-control-expose-headers")?.toLowerCase().split(/\s*,\s*/)).toContain("etag");
    }
    expect(notModified.status).toBe(304);
  });
});

describe("the license schedule read over HTTP, on the real entry under Deno", () => {
  it("serves the demo reads and a 304", async () => {
    const server = await startServer(suite.database.serverEnv);
    try {
      const reads = await Promise.all(
        ["DEMO-0000-0000-0001", "DEMO-0000-0000-0002", "DEMO-0000-0000-0004"].map(async (key) => {
          const response = await fetch(`${server.url}${path(key)}`);
          return { etag: response.headers.get("etag"), body: await response.json() };
        }),
      );
      expect(reads.map(({ body }) => body.type)).toEqual(["daily", "weekly", null]);
      for (const { etag, body } of reads) expect(etag).toBe(`"${body.version}"`);
      const conditional = await fetch(`${server.url}${path("DEMO-0000-0000-0001")}`, {
        headers: { "if-none-match": `W/${reads[0].etag}` },
      });
      expect(conditional.status).toBe(304);
      expect(await conditional.text()).toBe("");
      expect(conditional.headers.get("etag")).toBe(reads[0].etag);
    } finally {
      await server.stop();
    }
  });
});
