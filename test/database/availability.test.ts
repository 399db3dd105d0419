import { describe, expect, it } from "vitest";
import { withAvailability } from "../../functions/app/db/availability.ts";
import { type Database, DEFAULT_DEADLINE_MS } from "../../functions/app/db/database.ts";
import { openPostgres } from "../../functions/app/db/postgres.ts";
import { DatabaseBusy, DatabaseUnavailable, isUnavailable } from "../../functions/app/db/unavailable.ts";
import { memoryLogger } from "../support/app.ts";
import { scopedDatabase } from "../support/database.ts";
import { freePort } from "../support/postgres-server.ts";

/** A database whose answers the test switches: up, down (connection refused) or a wrong statement. */
function switchable() {
  let state: "up" | "down" = "up";
  let statements = 0;
  const waiting: (() => void)[] = [];
  const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
  const db: Database = {
    query<Row>(text: string) {
      statements += 1;
      for (const resolve of waiting.splice(0)) resolve();
      if (state === "down") return Promise.reject(refused);
      if (text === "wrong") return Promise.reject(Object.assign(new Error("syntax error"), { code: "42601" }));
      return Promise.resolve([{ ok: 1 }] as Row[]);
    },
    script: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  return {
    db,
    set: (next: "up" | "down") => (state = next),
    statements: () => statements,
    /** Resolves at the next statement it is asked (a probe, while unavailable). */
    asked: () => new Promise<void>((resolve) => waiting.push(resolve)),
  };
}

describe("the database's availability (db/availability.ts)", () => {
  it("passes a statement's own error through unchanged and stays available", async () => {
    const inner = switchable();
    const logger = memoryLogger();
    const db = withAvailability(inner.db, logger.log, 10);
    await expect(db.query("wrong")).rejects.toMatchObject({ code: "42601" });
    expect(await db.query("select 1")).toEqual([{ ok: 1 }]);
    expect(logger.lines).toEqual([]);
    await db.close();
  });

  it("marks it unavailable on a refused connection, logs once, and fails fast without asking it meanwhile", async () => {
    const inner = switchable();
    const logger = memoryLogger();
    const db = withAvailability(inner.db, logger.log, 60_000);
    inner.set("down");
    await expect(db.query("select 1")).rejects.toBeInstanceOf(DatabaseUnavailable);
    const asked = inner.statements();
    for (let i = 0; i < 100; i++) await expect(db.query("select 1")).rejects.toBeInstanceOf(DatabaseUnavailable);
    expect(inner.statements()).toBe(asked);
    expect(logger.lines.map((line) => JSON.parse(line).event)).toEqual(["database_unavailable"]);
    await db.close();
  });

  it("probes while unavailable and is available again at the first answer, logging how long it was down", async () => {
    const inner = switchable();
    const logger = memoryLogger();
    const db = withAvailability(inner.db, logger.log, 10);
    inner.set("down");
    await expect(db.query("select 1")).rejects.toBeInstanceOf(DatabaseUnavailable);
    await inner.asked();
    // A probe found it down; the next one finds it up.
    inner.set("up");
    await expect.poll(() => logger.lines.length).toBe(2);
    expect(await db.query("select 1")).toEqual([{ ok: 1 }]);
    const events = logger.lines.map((line) => JSON.parse(line));
    expect(events.map((event) => event.event)).toEqual(["database_unavailable", "database_available"]);
    // Two probes apart (a timer may fire a fraction of a millisecond early).
    expect(events[1].downForMs).toBeGreaterThanOrEqual(10);
    await db.close();
  });
});

describe("what counts as the database being unavailable", () => {
  it("is a refused, reset or timed-out connection, a closed one, a shutdown, a cancelled statement or a missed deadline", () => {
    for (const code of ["ECONNREFUSED", "ECONNRESET", "08006", "08P01", "57P01", "57P03", "57014", "53300"]) {
      expect(isUnavailable(Object.assign(new Error(code), { code })), code).toBe(true);
    }
    expect(isUnavailable(new DatabaseUnavailable("no answer within 2000 ms"))).toBe(true);
  });

  it("is not a statement's own failure: a constraint, a syntax error, a bad value", () => {
    for (const code of ["23505", "23514", "42601", "22P02", "P0001"]) {
      expect(isUnavailable(Object.assign(new Error(code), { code })), code).toBe(false);
    }
    expect(isUnavailable(new Error("anything"))).toBe(false);
    expect(isUnavailable("a string")).toBe(false);
  });
});

describe("the Postgres pool's deadline (db/postgres.ts)", () => {
  const database = scopedDatabase();

  it("cancels a statement past the deadline on the server, and the pool answers the next one", async () => {
    const busy = "select count(*) from generate_series(1, 100000000000)";
    // The app's own deadline. The next statement may need a new connection (ours drops the one whose
    // statement it gave up on), and that connection is bounded by the same deadline: at 300 ms it
    // timed out once under libfaketime beside a second suite, a busy machine, not this rule.
    const db = openPostgres(database.url, { max: 1, deadlineMs: DEFAULT_DEADLINE_MS });
    try {
      // Our deadline or the server's statement_timeout, whichever fires first: both say "unavailable".
      // A statement busy working, not pg_sleep: under libfaketime with the clock moved ahead, a
      // timer that interrupts a backend's wait reads the real time, finds the (moved) deadline not
      // yet reached and is set again, so a sleeping statement is never cancelled there.
      await expect(db.query(busy)).rejects.toSatisfy(isUnavailable);
      expect(await db.query("select 1 as one")).toEqual([{ one: 1 }]);
      // The cancelled statement is gone from the server, not left running (uncancelled, it would run
      // for hours: the minute only catches that, however long a busy machine takes to end it).
      await expect.poll(
        async () => (await database.db.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where query = $1 and state = 'active'", [busy]))[0].n,
        { timeout: 60_000 },
      ).toBe(0);
    } finally {
      await db.close();
    }
  });

  it("refuses at once a statement whose caller already waited out the deadline", async () => {
    const db = openPostgres(database.url, { max: 1, deadlineMs: 300 });
    try {
      await expect(db.query("select 1", [], { askedAt: performance.now() - 400 })).rejects.toBeInstanceOf(DatabaseUnavailable);
    } finally {
      await db.close();
    }
  });

  it("sheds a statement sent with under half its deadline left that runs out of time as back-pressure, not an outage", async () => {
    const db = openPostgres(database.url, { max: 1, deadlineMs: 1_000 });
    try {
      // It waited 600 ms in this process (behind batches): the database had 400 ms, not a full deadline.
      await expect(db.query("select pg_sleep(5)", [], { askedAt: performance.now() - 600 })).rejects.toBeInstanceOf(DatabaseBusy);
      // Sent with its whole deadline, the same statement says the database did not answer in time
      // (our deadline or the server's statement_timeout, whichever fires first).
      const onTime = await db.query("select pg_sleep(5)").catch((error: unknown) => error);
      expect(isUnavailable(onTime)).toBe(true);
      expect(onTime).not.toBeInstanceOf(DatabaseBusy);
    } finally {
      await db.close();
    }
  });

  it.each([
    ["40P01", "deadlock_detected"],
    ["40001", "serialization_failure"],
  ])("sheds a statement the server aborts with %s (%s) as back-pressure, not a statement's own failure nor an outage", async (_, condition) => {
    const db = openPostgres(database.url, { max: 1 });
    try {
      const aborted = await db.query(`do $$ begin raise exception using errcode = '${condition}'; end $$`).catch((error: unknown) => error);
      expect(aborted).toBeInstanceOf(DatabaseBusy);
      expect(await db.query("select 1 as one")).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
  });

  it("gives up a connection attempt that gets no answer within the deadline", async () => {
    const { createServer } = await import("node:net");
    const silent = createServer(() => {});
    const port = await freePort();
    await new Promise<void>((resolve) => silent.listen(port, "127.0.0.1", resolve));
    const db = openPostgres(`postgres://postgres@127.0.0.1:${port}/postgres`, { max: 1, deadlineMs: 300 });
    try {
      await expect(db.query("select 1")).rejects.toSatisfy(isUnavailable);
    } finally {
      await db.close();
      silent.close();
    }
  });

  it("sends arrays as Postgres array text, quotes, backslashes, commas, braces and nulls intact", async () => {
    const db = openPostgres(database.url, { max: 1 });
    try {
      const values = ['a"b', "c\\d", "e,f", "{g}", null, "NULL", ""];
      const [row] = await db.query<{ back: string }>("select to_json($1::text[])::text as back", [values]);
      expect(JSON.parse(row.back)).toEqual(values);
    } finally {
      await db.close();
    }
  });
});
