import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { OVERLOAD_RETRY_AFTER_SECONDS } from "../../functions/app/http/admission.ts";
import { scopedDatabase } from "../support/database.ts";
import { type RunningServer, startServer } from "../support/server.ts";

/**
 * Requests the server works on at once, small so that a test fills them, and how long one more
 * waits for a turn: a second, so that only a loop a second late (never this test's) refuses the
 * requests meant to hold the turns (admission also refuses what its event loop hands over that late).
 */
const LIMIT = 4;
const QUEUE_MS = 1_000;
/** Requests sent while every turn is held: more than LIMIT may wait, so some are refused at once and some after their wait. */
const BEYOND = 3 * LIMIT;

/** A metric's value in a Prometheus text exposition, summed over its series that carry `label` (0 when none). */
function metric(text: string, name: string, label = ""): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    const match = /^(\w+)(\{.*\})? (\S+)$/.exec(line);
    if (match && match[1] === name && (match[2] ?? "").includes(label)) sum += Number(match[3]);
  }
  return sum;
}

/** The requests sent past the bound: catalogue reads, a license validation with a body, a schedule read. */
function beyondBound(url: string): Array<Promise<Response>> {
  return Array.from({ length: BEYOND }, (_, i) => {
    if (i % 3 === 0) return fetch(`${url}/api/v2/categories`);
    if (i % 3 === 1) {
      return fetch(`${url}/api/v2/license`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ license_key: "DEMO-0000-0000-0001", email_address: "demo@example.com" }),
      });
    }
    return fetch(`${url}/api/v2/licenses/DEMO-0000-0000-0001/schedule`);
  });
}

describe("admission control on the real server (ADMISSION_LIMIT, ADMISSION_QUEUE_MS)", () => {
  const database = scopedDatabase();
  let server: RunningServer;
  let sql: postgres.Sql;
  let admitted: Response[];
  let refused: Response[];
  let metricsDuring: string;
  let metricsAfter: string;

  beforeAll(async () => {
    // Statements get a minute: only the held lock, never the database's deadline, ends the admitted requests' wait.
    server = await startServer({
      ...database.serverEnv,
      ADMIN_PORT: "0",
      ADMISSION_LIMIT: String(LIMIT),
      ADMISSION_QUEUE_MS: String(QUEUE_MS),
      DATABASE_DEADLINE_MS: "60000",
    });
    sql = postgres(database.url, { max: 1, onnotice: () => {} });
    const scrape = () => fetch(`${server.adminUrl}/metrics`).then((response) => response.text());

    // Staff hold the categories table: every catalogue read of it waits until they let go.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockHeld = new Promise<void>((resolve) => (locked = resolve));
    const transaction = sql.begin(async (tx) => {
      await tx`lock table public.categories in access exclusive mode`;
      locked();
      await released;
    });
    await lockHeld;

    // LIMIT requests take every turn and wait on the lock...
    const holding = Array.from({ length: LIMIT }, () => fetch(`${server.url}/api/v2/categories`));
    await vi.waitFor(async () => expect(metric(await scrape(), "cadence_requests_in_flight")).toBe(LIMIT), { timeout: 120_000, interval: 20 });
    // ...so each one sent now finds none: it waits QUEUE_MS, or, with LIMIT already waiting, is refused at once.
    refused = await Promise.all(beyondBound(server.url));
    metricsDuring = await scrape();
    release();
    await transaction;
    admitted = await Promise.all(holding);
    metricsAfter = await scrape();
  });
  afterAll(async () => {
    await sql?.end();
    await server?.stop();
  });

  it("answers every request past the bound 503 with an integer Retry-After in its range and the JSON message, without waiting for the requests it works on", async () => {
    expect(refused.map((answer) => answer.status)).toEqual(Array(BEYOND).fill(503));
    for (const answer of refused) {
      const retryAfter = answer.headers.get("retry-after")!;
      expect(retryAfter).toMatch(/^\d+$/);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(OVERLOAD_RETRY_AFTER_SECONDS.min);
      expect(Number(retryAfter)).toBeLessThanOrEqual(OVERLOAD_RETRY_AFTER_SECONDS.max);
      expect(answer.headers.get("content-type")).toBe("application/json");
      expect(await answer.json()).toEqual({ message: "service temporarily unavailable" });
    }
    // They were answered while the admitted requests still held every turn.
    expect(metric(metricsDuring, "cadence_requests_in_flight")).toBe(LIMIT);
  });

  it("serves the requests it admitted once the database answers them", async () => {
    expect(admitted.map((answer) => answer.status)).toEqual(Array(LIMIT).fill(200));
    for (const answer of admitted) expect(Array.isArray(await answer.json())).toBe(true);
  });

  it("counts each refusal in /metrics by reason, and gives every turn back", () => {
    const full = metric(metricsAfter, "cadence_requests_shed_total", 'reason="full"');
    const waited = metric(metricsAfter, "cadence_requests_shed_total", 'reason="waited"');
    expect(full + waited).toBe(BEYOND);
    expect(metric(metricsAfter, "cadence_requests_in_flight")).toBe(0);
    expect(metric(metricsAfter, "cadence_requests_waiting")).toBe(0);
  });

  it("logs the refusals as requests_shed, never per request", () => {
    const lines = server.logs().split("\n").filter((line) => line.includes('"event":"requests_shed"'));
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.length).toBeLessThan(BEYOND);
  });

  it("serves the next request once the overload has passed", async () => {
    const answer = await fetch(`${server.url}/api/v2/categories`);
    expect(answer.status).toBe(200);
    await answer.body?.cancel();
  });
});
