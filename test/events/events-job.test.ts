import postgres from "postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeDirectOnly, scopedDatabase } from "../support/database.ts";
import { type RunningServer, startServer } from "../support/server.ts";
import { openTestEndpoint } from "./test-endpoint.ts";

// The events job on Supabase (supabase/README.md): pg_cron asks cadence.events_are_due() every
// second and, only when it is true, calls the outbox function's /outbox/events, which delivers the
// events owed and nothing else. Here the function runs under Deno as `supabase functions serve`
// would, on SUPABASE_DB_URL, and the job's question is asked in SQL.

const database = scopedDatabase();

describeDirectOnly("POST /outbox/events, the call of the events job", () => {
  let sql: postgres.Sql;
  let outbox: RunningServer;
  let endpoint: Awaited<ReturnType<typeof openTestEndpoint>>;
  const due = async () => (await sql<{ due: boolean }[]>`select cadence.events_are_due() as due`)[0].due;
  const call = async (method = "POST") => {
    const response = await fetch(`${outbox.url}/outbox/events`, { method });
    return { status: response.status, body: await response.json() };
  };

  beforeAll(async () => {
    sql = postgres(database.url, { max: 1, onnotice: () => {} });
    endpoint = await openTestEndpoint(sql, { notifyEmail: "job@example.com" });
    outbox = await startServer({ SUPABASE_DB_URL: database.url }, "functions/outbox/index.ts");
  });
  afterAll(async () => {
    await outbox?.stop();
    await endpoint?.receiver.close();
    await sql?.end();
  });

  it("is asked for only when an endpoint is due with events owed", async () => {
    expect(await due()).toBe(false);
    await sql`insert into public.accounts (email, display_name) values ('job-account@example.com', 'Job')`;
    expect(await due()).toBe(true);
  });

  it("delivers the events owed, signed, and answers what it sent", async () => {
    expect(await call()).toEqual({ status: 200, body: { events: { messages: 1, events: 1, failed: 0, disabled: 0 } } });
    const accepted = endpoint.receiver.accepted();
    expect(accepted.map((event) => event.type)).toEqual(["account.created"]);
    expect(endpoint.receiver.messages.every((message) => message.verified)).toBe(true);
    expect(await due()).toBe(false);
  });

  it("sends nothing when nothing is owed, and refuses other methods", async () => {
    expect(await call()).toEqual({ status: 200, body: { events: { messages: 0, events: 0, failed: 0, disabled: 0 } } });
    expect((await call("GET")).status).toBe(405);
    expect(endpoint.receiver.messages).toHaveLength(1);
  });
});
