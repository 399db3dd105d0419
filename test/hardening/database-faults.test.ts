import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../functions/app/db/migrate.ts";
import { openPostgres } from "../../functions/app/db/postgres.ts";
import { ONBOARDING_PATH, SECRET, signedInit } from "../support/onboarding.ts";
import { type PgBouncer, pgbouncerAvailable, startPgBouncer } from "../support/pgbouncer.ts";
import { type PostgresServer, startPostgresServer } from "../support/postgres-server.ts";
import { type RunningServer, startServer } from "../support/server.ts";

/**
 * A call that has no answer after this long is a hang, and fails the test. The server answers
 * within its deadline (DATABASE_DEADLINE_MS, 2 s); how long each answer and each recovery took is
 * printed, not asserted: a busy machine stretches both.
 */
const HANG_MS = 10_000;
/** The catalogue's cache in these servers (CATALOGUE_TTL_MS), shortened from 5 s so a test need not wait it out. */
const CATALOGUE_TTL_MS = 300;
/** Longer than that cache, so catalogue reads must go to the database. */
const PAST_CATALOGUE_TTL_MS = 400;

const KEY = "DEMO-0000-0000-0001";
const EMAIL = "demo@example.com";
/** A key no request reads before the fault, so nothing of it is known: unknown to the database, too. */
const NEVER_READ = "NONE-0000-0000-0000";

const catalogue = ["/api/v2/categories", "/api/v2/groups", "/api/v2/frequencies", "/api/v2/color-palettes", "/api/v2/proclamations"];
const kioskReads: Array<{ name: string; path: string; init?: RequestInit }> = [
  ...catalogue.map((path) => ({ name: `GET ${path}`, path })),
  { name: "GET /api/v2/licenses/{licenseKey}/schedule", path: `/api/v2/licenses/${KEY}/schedule` },
  { name: "GET /api/v2/schedule", path: `/api/v2/schedule?email=${EMAIL}&licenseKey=${KEY}` },
  { name: "GET /api/v2/proclamations (entitled)", path: "/api/v2/proclamations", init: { headers: { "x-license-key": KEY, "x-email": EMAIL } } },
  {
    name: "POST /api/v2/license",
    path: "/api/v2/license",
    init: { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ license_key: KEY, email_address: EMAIL }) },
  },
];

interface Answer {
  status: number;
  headers: Headers;
  body: string;
  ms: number;
}

let ipCounter = 0;
/** Each call from its own client IP, so the rate limits (10 a minute per IP) never interfere. */
async function call(server: RunningServer, path: string, init: RequestInit = {}): Promise<Answer> {
  const headers = new Headers(init.headers);
  ipCounter += 1;
  headers.set("x-forwarded-for", `10.9.${(ipCounter >> 8) & 255}.${ipCounter & 255}`);
  const started = performance.now();
  const response = await fetch(server.url + path, { ...init, headers, signal: AbortSignal.timeout(HANG_MS) });
  const body = await response.text();
  return { status: response.status, headers: response.headers, body, ms: performance.now() - started };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the fault reports print: the statuses seen and the slowest answer. */
function summary(answers: Answer[]) {
  const statuses: Record<number, number> = {};
  for (const { status } of answers) statuses[status] = (statuses[status] ?? 0) + 1;
  return { statuses, slowestMs: Math.round(Math.max(...answers.map((answer) => answer.ms))) };
}

/**
 * Polls a read of `NEVER_READ` until the database answers it (404 unknown_license, read fresh):
 * the time from `since` to that answer is the recovery time.
 */
async function recovery(server: RunningServer, since: number): Promise<number> {
  for (;;) {
    const answer = await call(server, `/api/v2/licenses/${NEVER_READ}/schedule`);
    if (answer.status === 404) return performance.now() - since;
    expect(answer.status).toBe(503);
    if (performance.now() - since > 30_000) throw new Error("no recovery within 30 s");
    await sleep(25);
  }
}

const paths = [
  { name: "direct", pooled: false },
  { name: "through PgBouncer in transaction mode (SUPABASE_DB_URL)", pooled: true },
];

for (const { name, pooled } of paths) {
  describe.skipIf(pooled && !pgbouncerAvailable() && process.env.CI !== "true")(`kiosk reads while the database fails, ${name}`, () => {
    let cluster: PostgresServer;
    let pooler: PgBouncer | undefined;
    let server: RunningServer;
    /** What each kiosk read answered while the database was up. */
    const known = new Map<string, Answer>();

    beforeAll(async () => {
      cluster = await startPostgresServer();
      const setup = openPostgres(cluster.url, { max: 1 });
      await migrate(setup, { seed: true });
      await setup.close();
      if (pooled) pooler = await startPgBouncer(cluster.port);
      server = await startServer({
        // Each call names its own client in X-Forwarded-For (call), as Supabase names it in CF-Connecting-IP.
        ...(pooler
          ? { SUPABASE_DB_URL: pooler.through(cluster.url), CLIENT_IP_HEADER: "x-forwarded-for" }
          : { DATABASE_URL: cluster.url, TRUST_PROXY: "true" }),
        SIGNING_SECRET: SECRET,
        CATALOGUE_TTL_MS: String(CATALOGUE_TTL_MS),
      });
    });
    afterAll(async () => {
      await server?.stop();
      await pooler?.stop();
      await cluster?.stop();
    });

    /** Reads every kiosk read while the database is up; they become this instance's last known good. */
    async function readAll() {
      for (const read of kioskReads) {
        const answer = await call(server, read.path, read.init);
        expect(answer.status, read.name).toBe(200);
        expect(answer.headers.get("age"), read.name).toBeNull();
        known.set(read.name, answer);
      }
    }

    /**
     * While the database is unavailable: every kiosk read answers (never hangs) with its last
     * known good answer and an `Age`; the license schedule keeps its ETag and its 304; what was
     * never read, and every write, is a 503 with Retry-After; onboarding is the contract's 500.
     */
    async function expectAnsweredWithoutTheDatabase(): Promise<Answer[]> {
      const answers: Answer[] = [];
      for (const read of kioskReads) {
        const answer = await call(server, read.path, read.init);
        answers.push(answer);
        expect(answer.status, read.name).toBe(200);
        expect(answer.body, read.name).toBe(known.get(read.name)!.body);
        expect(Number(answer.headers.get("age")), read.name).toBeGreaterThanOrEqual(0);
        expect(answer.headers.get("age"), read.name).toMatch(/^\d+$/);
      }
      const schedule = known.get("GET /api/v2/licenses/{licenseKey}/schedule")!;
      const etag = schedule.headers.get("etag")!;
      const stale = await call(server, `/api/v2/licenses/${KEY}/schedule`, { headers: { "if-none-match": `W/${etag}` } });
      answers.push(stale);
      expect(stale.status).toBe(304);
      expect(stale.headers.get("etag")).toBe(etag);
      expect(stale.headers.get("age")).toMatch(/^\d+$/);

      const unavailable = [
        await call(server, `/api/v2/licenses/${NEVER_READ}/schedule`),
        await call(server, `/api/v2/schedule?email=other@example.com&licenseKey=${NEVER_READ}`),
        await call(server, "/api/v2/license", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ license_key: KEY, email_address: EMAIL, systemName: "Lobby" }),
        }),
        await call(server, `/api/v2/licenses/${KEY}/system-name`, {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ systemName: "Hall" }),
        }),
      ];
      for (const answer of unavailable) {
        expect(answer.status).toBe(503);
        expect(JSON.parse(answer.body)).toEqual({ message: "service temporarily unavailable" });
        expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      }
      const onboarding = await call(server, ONBOARDING_PATH, await signedInit({ email: `fault${ipCounter}@example.com` }, { nowMs: Date.now() }));
      expect(onboarding.status).toBe(500);
      expect(JSON.parse(onboarding.body)).toEqual({ message: "the account could not be created" });
      return [...answers, ...unavailable, onboarding];
    }

    let outagesLogged = 0;
    /**
     * A line when the database became unavailable and one when it came back, for an outage the
     * server noticed (`noticed`: an answer came from memory or was a 503); for one no answer showed
     * (a pooler that held the statements through a short restart), none, or one that only the
     * server's background work met (a sightings write, the venue addresses' refresh); never a line
     * per request. A restart behind a pooler may show as two short outages (the pooler answers
     * before the server does), so one fault logs at most two.
     */
    function expectOutageLogged(noticed: boolean) {
      const down = (server.logs().match(/"event":"database_unavailable"/g) ?? []).length;
      const up = (server.logs().match(/"event":"database_available"/g) ?? []).length;
      expect(up).toBe(down);
      expect(down - outagesLogged).toBeGreaterThanOrEqual(noticed ? 1 : 0);
      expect(down - outagesLogged).toBeLessThanOrEqual(2);
      outagesLogged = down;
      expect(server.logs()).not.toContain('"event":"request_failed"');
    }

    it("stopped (pg_ctl stop -m immediate): answers from the last known good, never hangs, and is correct again once it restarts", async () => {
      await readAll();
      await sleep(PAST_CATALOGUE_TTL_MS);
      await cluster.crash();
      const answers = await expectAnsweredWithoutTheDatabase();
      await cluster.start();
      const recoveredMs = await recovery(server, performance.now());
      await readAll();
      expectOutageLogged(true);
      console.log(`database faults, ${name}: stopped ${JSON.stringify(summary(answers))}, recovered in ${Math.round(recoveredMs)} ms`);
    });

    it("restarted on the same port while kiosks poll: no 500, and correct again once it is back", async () => {
      await readAll();
      await sleep(PAST_CATALOGUE_TTL_MS);
      const polls: Answer[] = [];
      let polling = true;
      const poller = (async () => {
        while (polling) {
          for (const read of kioskReads) polls.push(await call(server, read.path, read.init));
        }
      })();
      let recoveredMs: number;
      try {
        await sleep(200);
        await cluster.crash();
        await sleep(500);
        await cluster.start();
        recoveredMs = await recovery(server, performance.now());
      } finally {
        polling = false;
        await poller;
      }
      expect(polls.filter((answer) => answer.status !== 200)).toEqual([]);
      await readAll();
      expectOutageLogged(polls.some((answer) => answer.headers.has("age")));
      console.log(`database faults, ${name}: restarted ${JSON.stringify(summary(polls))}, recovered in ${Math.round(recoveredMs)} ms`);
    });

    it("hung (every Postgres process paused with SIGSTOP): answers from the last known good, never hangs, and is correct again after SIGCONT", async () => {
      await readAll();
      await sleep(PAST_CATALOGUE_TTL_MS);
      cluster.pause();
      let answers: Answer[];
      try {
        answers = await expectAnsweredWithoutTheDatabase();
      } finally {
        cluster.resume();
      }
      const recoveredMs = await recovery(server, performance.now());
      await readAll();
      expectOutageLogged(true);
      console.log(`database faults, ${name}: hung ${JSON.stringify(summary(answers))}, recovered in ${Math.round(recoveredMs)} ms`);
    });

    if (pooled) it("the pooler restarted: answers from the last known good meanwhile, and correct again once it is back", async () => {
      await readAll();
      await sleep(PAST_CATALOGUE_TTL_MS);
      await pooler!.kill();
      const answers = await expectAnsweredWithoutTheDatabase();
      await pooler!.start();
      const recoveredMs = await recovery(server, performance.now());
      await readAll();
      expectOutageLogged(true);
      console.log(`database faults, ${name}: pooler restarted ${JSON.stringify(summary(answers))}, recovered in ${Math.round(recoveredMs)} ms`);
    });
  });
}
