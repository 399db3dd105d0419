import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../functions/app/db/database.ts";
import { migrate } from "../../functions/app/db/migrate.ts";
import { openPostgres } from "../../functions/app/db/postgres.ts";
import { kioskSightings } from "../../functions/app/kiosk/sightings.ts";
import { memoryLogger, testApp } from "../support/app.ts";
import { memoryMailer } from "../support/mailer.ts";
import { ONBOARDING_PATH, SECRET, signedInit } from "../support/onboarding.ts";
import { type PgBouncer, pgbouncerAvailable, startPgBouncer } from "../support/pgbouncer.ts";
import { type PostgresServer, startPostgresServer } from "../support/postgres-server.ts";

const KEY = "DEMO-0000-0000-0001";
const EMAIL = "demo@example.com";
const ONBOARDED = "statement-log@example.com";

/**
 * One log entry per line that starts with the default log_line_prefix's timestamp; a statement's
 * further lines (a tab first) belong to its entry.
 */
function entries(log: string): string[] {
  return log.split(/\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)/);
}

const paths = [
  { name: "direct (DATABASE_URL)", pooled: false },
  { name: "through PgBouncer in transaction mode (SUPABASE_DB_URL)", pooled: true },
];

for (const { name, pooled } of paths) {
  describe.skipIf(pooled && !pgbouncerAvailable() && process.env.CI !== "true")(`the statements the kiosk routes send, ${name}`, () => {
    let cluster: PostgresServer;
    let pooler: PgBouncer | undefined;
    let db: Database;
    /** What Postgres logged while the routes ran, and the keys and e-mails the database then held. */
    let logged: string;
    let secrets: string[];

    beforeAll(async () => {
      cluster = await startPostgresServer({ log_statement: "all" });
      const setup = openPostgres(cluster.url, { max: 1 });
      await migrate(setup, { seed: true });
      await setup.close();
      if (pooled) pooler = await startPgBouncer(cluster.port);
      db = pooler ? openPostgres(pooler.through(cluster.url), { transactionPooler: true }) : openPostgres(cluster.url);
      const log = memoryLogger().log;
      const sightings = kioskSightings({ db, now: Date.now, log, flushEveryMs: 10, perKeyMs: 0 });
      const { request } = testApp(db, { signingSecret: SECRET, mailer: memoryMailer().mailer, log, sightings });
      const since = cluster.logs().length;

      const kiosk = { "x-license-key": KEY, "x-email": EMAIL };
      const post = (path: string, method: string, body: unknown) =>
        request(path, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      const answers = [
        await request("/api/v2/frequencies"),
        await request("/api/v2/proclamations"),
        await request("/api/v2/proclamations", { headers: kiosk }),
        await post("/api/v2/license", "POST", { license_key: KEY, email_address: EMAIL }),
        await post("/api/v2/license", "POST", { license_key: KEY, email_address: EMAIL, systemName: "Lobby" }),
        await request(`/api/v2/licenses/${KEY}/schedule`),
        await request(`/api/v2/schedule?email=${encodeURIComponent(EMAIL)}&licenseKey=${KEY}`),
        await post(`/api/v2/licenses/${KEY}/system-name`, "PUT", { systemName: "Front desk" }),
        await request(ONBOARDING_PATH, await signedInit({ email: ONBOARDED, name: "Statement Log" }, { nowMs: Date.now() })),
      ];
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200]);
      await sightings.close();
      logged = cluster.logs().slice(since);

      const rows = await db.query<{ secret: string }>(
        `select key as secret from public.license_keys
         union select email from public.license_keys
         union select email from public.accounts
         union select recipient from public.email_outbox`,
      );
      secrets = rows.map((row) => row.secret);
    });
    afterAll(async () => {
      await db?.close();
      await pooler?.stop();
      await cluster?.stop();
    });

    it("logs the routes' statements, their values as parameters", () => {
      const parameters = entries(logged).filter((entry) => /DETAIL: {2}parameters: /.test(entry));
      expect(parameters.length).toBeGreaterThan(0);
      expect(parameters.some((entry) => entry.includes(KEY))).toBe(true);
      expect(parameters.some((entry) => entry.includes(EMAIL))).toBe(true);
      expect(parameters.some((entry) => entry.includes(ONBOARDED))).toBe(true);
    });

    it("never has a license key or an e-mail in a statement's text", () => {
      expect(secrets).toContain(KEY);
      expect(secrets).toContain(ONBOARDED);
      const statements = entries(logged).filter((entry) => !/DETAIL: {2}parameters: /.test(entry));
      expect(statements.filter((entry) => /LOG: {2}(statement|execute)/.test(entry)).length).toBeGreaterThan(0);
      for (const secret of secrets) {
        expect(statements.filter((entry) => entry.toLowerCase().includes(secret.toLowerCase())), secret).toEqual([]);
      }
    });
  });
}

describe("the statements the kiosk routes send, with log_parameter_max_length = 0 (functions/README.md, Logs)", () => {
  let cluster: PostgresServer;
  let db: Database;

  beforeAll(async () => {
    cluster = await startPostgresServer({ log_statement: "all", log_parameter_max_length: "0" });
    db = openPostgres(cluster.url, { max: 1 });
    await migrate(db, { seed: true });
  });
  afterAll(async () => {
    await db?.close();
    await cluster?.stop();
  });

  it("logs each statement without its parameters, so no key or e-mail reaches the Postgres log", async () => {
    const { request } = testApp(db);
    const since = cluster.logs().length;
    const answer = await request("/api/v2/proclamations", { headers: { "x-license-key": KEY, "x-email": EMAIL } });
    expect(answer.status).toBe(200);
    const logged = cluster.logs().slice(since);
    expect(logged).toMatch(/LOG: {2}(statement|execute)/);
    expect(logged).not.toMatch(/DETAIL: {2}parameters: /);
    expect(logged).not.toContain(KEY);
    expect(logged.toLowerCase()).not.toContain(EMAIL);
  });
});
