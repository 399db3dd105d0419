import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scopedDatabase } from "../support/database.ts";
import { DEMO_EMAILS, DEMO_KEYS, leaksIn } from "../support/log-leaks.ts";
import { ONBOARDING_PATH, SECRET, signedInit } from "../support/onboarding.ts";
import { startServer, type RunningServer } from "../support/server.ts";

const json = (method: string, body: unknown, ip: string): RequestInit => ({
  method,
  headers: { "content-type": "application/json", "x-forwarded-for": ip },
  body: JSON.stringify(body),
});

/**
 * Every route with every demo key and e-mail, answered well and badly, then again with the SQL
 * functions behind the writes gone, so each route's unexpected-error path (500 and its
 * `request_failed` line, onboarding's `onboarding_failed`) runs with a credential in the request.
 */
async function everyRoute(url: string, round: number): Promise<number[]> {
  const statuses: number[] = [];
  let n = 0;
  const ip = () => `198.51.${round}.${++n}`;
  const call = async (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (!headers.has("x-forwarded-for")) headers.set("x-forwarded-for", ip());
    const response = await fetch(`${url}${path}`, { ...init, headers });
    await response.body?.cancel();
    statuses.push(response.status);
  };
  for (const key of [...DEMO_KEYS, DEMO_KEYS[0].toLowerCase()]) {
    for (const email of [...DEMO_EMAILS, "nobody@example.com"]) {
      await call("/api/v2/proclamations", { headers: { "x-license-key": key, "x-email": email } });
      await call(`/api/v2/schedule?email=${encodeURIComponent(email)}&licenseKey=${key}`);
      await call("/api/v2/license", json("POST", { license_key: key, email_address: email }, ip()));
      await call("/api/v2/license", json("POST", { license_key: key, email_address: email, systemName: `n${round}${n}` }, ip()));
    }
    await call(`/api/v2/licenses/${key}/schedule`);
    await call(`/api/v2/licenses/${key}/system-name`, json("PUT", { systemName: `kiosk ${round} ${n}` }, ip()));
    await call(`/api/v2/licenses/${key}/system-name`, json("PUT", { systemName: "" }, ip()));
    await call(`/api/v2/licenses/${key}/nowhere`);
  }
  for (const email of DEMO_EMAILS) {
    await call(`/api/v2/${email}`);
    await call(ONBOARDING_PATH, await signedInit({ email }, { nowMs: Date.now(), ip: ip() }));
    await call(ONBOARDING_PATH, await signedInit({ email }, { nowMs: Date.now(), ip: ip(), secret: "not-the-secret" }));
  }
  return statuses;
}

describe("what the server prints", () => {
  const database = scopedDatabase();
  let server: RunningServer;
  const env = () => ({ DATABASE_URL: database.url, TRUST_PROXY: "true", SIGNING_SECRET: SECRET, MAILER: "resend", RESEND_API_KEY: "re_log_secret", RESEND_API_URL: "http://127.0.0.1:9/emails" });

  beforeAll(async () => {
    server = await startServer(env());
  });
  afterAll(async () => {
    await server?.stop().catch(() => {});
  });

  it("holds no demo key, demo e-mail or secret, over every route, its failures and its unexpected errors", async () => {
    const ordinary = await everyRoute(server.url, 1);
    expect(ordinary).toContain(200);
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      // Statements that fail on their own merits (not an outage): each write route answers 500.
      await sql.unsafe(`
        alter function cadence.set_system_names(text[], text[]) rename to set_system_names_gone;
        alter function cadence.onboard rename to onboard_gone;`);
    } finally {
      await sql.end();
    }
    const failing = await everyRoute(server.url, 2);
    expect(failing).toContain(500);
    await server.stop().catch(() => {});
    const output = server.logs();
    expect(output).toContain('"event":"request_failed"');
    expect(leaksIn(output, env())).toEqual([]);
  });
});
