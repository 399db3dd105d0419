import { readFileSync } from "node:fs";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scopedDatabase } from "../support/database.ts";
import { FULL_KEY_IN_TEXT } from "../support/onboarding.ts";
import { startServer, type RunningServer } from "../support/server.ts";

/** Statuses the contract names (plus 204 for CORS preflight, 405 and 408 where it is silent). */
const SPECD = new Set([200, 204, 304, 400, 401, 404, 405, 408, 409, 413, 429]);
/** Requests per run: 10,000 in `npm test`, 100,000 in `npm run test:soak`. */
const REQUESTS = process.env.SOAK ? 100_000 : 10_000;
const CONCURRENCY = 16;

const keys = ["DEMO-0000-0000-0001", "DEMO-0000-0000-0002", "DEMO-0000-0000-0003", "DEMO-0000-0000-0004", "DEMO-0000-0000-0005"];
const emails = ["demo@example.com", "DEMO@EXAMPLE.COM ", "legacy@example.com", "other@example.com", "nobody@example.com"];

const ascii = fc.string({ unit: "grapheme-ascii", maxLength: 40 });
const anyText = fc.oneof(
  ascii,
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("", " ", "\u0000", "é", "💥", "null", "0", "-1", "1e309", "%00", "../", "'; drop table accounts; --"),
  fc.integer({ min: 1, max: 4 }).map((n) => "x".repeat(10 ** n)),
);
const keyLike = fc.oneof(fc.constantFrom(...keys), fc.constantFrom("demo-0000-0000-0001", "DEMO-0000-0000-000", "ZZZZ-ZZZZ-ZZZZ-ZZZZ"), anyText);
const emailLike = fc.oneof(fc.constantFrom(...emails), anyText, fc.constant(`${"a".repeat(250)}@example.com`));
/** Header values fetch can send: visible ASCII and spaces. */
const headerValue = fc.oneof(keyLike, emailLike, ascii).map((value) => value.replace(/[^\x20-\x7e]/g, "").trim());

/** Near-valid bodies: the right shape with one field wrong in type, size or content. */
const nearValid = fc.record(
  {
    license_key: fc.oneof(keyLike, fc.integer(), fc.constant(null), fc.array(fc.string())),
    email_address: fc.oneof(emailLike, fc.double(), fc.boolean(), fc.object()),
    systemName: fc.oneof(anyText, fc.integer(), fc.constant(null)),
    email: fc.oneof(emailLike, fc.integer(), fc.constant(null)),
    name: fc.oneof(anyText, fc.array(fc.integer())),
  },
  { requiredKeys: [] },
);

const encoder = new TextEncoder();
const body: fc.Arbitrary<Uint8Array | string | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue().map((value) => JSON.stringify(value)),
  nearValid.map((value) => JSON.stringify(value)),
  fc.constantFrom(
    "",
    "{",
    '{"license_key":"DEMO-0000-0000-0001","license_key":"DEMO-0000-0000-0004","email_address":"demo@example.com"}',
    "[".repeat(60_000),
    `{"systemName":"${"x".repeat(60_000)}"}`,
    '{"email":"a@b.c","name":"\\ud800"}',
  ),
  fc.uint8Array({ maxLength: 64 }),
  fc.constant(new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])),
  anyText,
);

function pathFor(template: string): fc.Arbitrary<string> {
  const withParams = fc.oneof(keyLike, anyText).map((key) => template.replace("{licenseKey}", encodeURIComponent(key)));
  if (template !== "/api/v2/schedule") return template.includes("{") ? withParams : fc.constant(template);
  return fc
    .record({ email: emailLike, licenseKey: keyLike, key: keyLike }, { requiredKeys: [] })
    .map((query) => `${template}?${new URLSearchParams(query as Record<string, string>)}`);
}

describe("every route under generated bad input", () => {
  const database = scopedDatabase();
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: database.url, TRUST_PROXY: "true", SIGNING_SECRET: "bad-input-secret" });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"))?.[1] ?? 0) * 1024;

  it(`answers ${REQUESTS} generated requests with a spec'd status and an application/json message, never a 500 or a hang`, async () => {
    const document = await (await fetch(`${server.url}/api/v2/openapi.json`)).json();
    // Mostly the method each path declares, so most requests reach validation; sometimes any method or path.
    const declared = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path }))
    );
    expect(declared.length).toBeGreaterThan(8);
    const anyMethod = fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD");
    const anyPath = fc.constantFrom(...declared.map((route) => route.path), "/api/v2/nope", "/api/v1/categories", "/", "/api/v2/licenses//schedule");
    const target = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...declared).chain(({ method, path }) => pathFor(path).map((url) => ({ method, path: url }))) },
      { weight: 2, arbitrary: fc.record({ method: anyMethod, path: anyPath.chain(pathFor) }) },
    );
    const request = fc.record({
      target,
      contentType: fc.constantFrom(undefined, "application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "APPLICATION/JSON", "garbage"),
      headers: fc.dictionary(
        fc.constantFrom("x-license-key", "x-email", "if-none-match", "x-timestamp", "x-nonce", "x-signature", "origin", "access-control-request-method"),
        headerValue,
        { maxKeys: 4 },
      ),
      body,
      ip: fc.oneof(
        { weight: 1, arbitrary: fc.constant("198.51.100.7") },
        { weight: 9, arbitrary: fc.nat().map((n) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`) },
      ),
    });
    const samples = fc.sample(request, REQUESTS);
    const rssBefore = rss();
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let next = 0;

    async function send(sample: (typeof samples)[number]) {
      const headers = new Headers({ "x-forwarded-for": sample.ip });
      if (sample.contentType) headers.set("content-type", sample.contentType);
      for (const [name, value] of Object.entries(sample.headers)) headers.set(name, value);
      const { method, path } = sample.target;
      const hasBody = sample.body !== undefined && !["GET", "HEAD"].includes(method);
      const response = await fetch(server.url + path, {
        method,
        headers,
        body: hasBody ? ((typeof sample.body === "string" ? encoder.encode(sample.body) : sample.body) as Uint8Array<ArrayBuffer>) : undefined,
        signal: AbortSignal.timeout(15_000),
      });
      const text = await response.text();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      const where = `${method} ${path.slice(0, 120)} -> ${response.status} ${text.slice(0, 200)}`;
      if (!SPECD.has(response.status)) return failures.push(where);
      if (response.status === 204 || response.status === 304 || method === "HEAD") return;
      // The contract: every answer but 304 is application/json.
      if (!/^application\/json\b/.test(response.headers.get("content-type") ?? "")) return failures.push(`not application/json: ${where}`);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return failures.push(`not JSON: ${where}`);
      }
      if (response.status === 200) return;
      const message = response.status === 401 ? (parsed as { error?: unknown }).error : (parsed as { message?: unknown }).message;
      if (typeof message !== "string" || message === "") failures.push(`no message: ${where}`);
    }

    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < samples.length) await send(samples[next++]);
      }),
    );
    console.log(`bad input: ${samples.length} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
    expect(failures.slice(0, 20)).toEqual([]);
    expect([...statuses.keys()]).toEqual(expect.arrayContaining([200, 400, 404]));
    expect(server.logs()).not.toContain('"request_failed"');
    expect(server.logs()).not.toContain("bad-input-secret");
    expect(server.logs()).not.toMatch(FULL_KEY_IN_TEXT);
    // Memory may grow with caches and pools, but not with the number of requests served.
    expect(rss() - rssBefore).toBeLessThan(100 * 1024 * 1024);
  });
});
