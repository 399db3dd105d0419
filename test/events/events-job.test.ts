import { readFileSync } from "node:fs";
import postgres from "postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeDirectOnly, scopedDatabase } from "../support/database.ts";
import { freePort } from "../support/postgres-server.ts";
import { type RunningServer, startServer } from "../support/server.ts";
import { SUPABASE_EXTENSIONS_SQL } from "../support/supabase-extensions.ts";
import { openTestEndpoint } from "./test-endpoint.ts";

// The events job on Supabase (supabase/README.md): pg_cron asks cadence.events_are_due() every
// second and, only when it is true, calls the outbox function's /outbox/events, which delivers the
// events owed and nothing else. Here the function runs under Deno as `supabase functions serve`
// would, on SUPABASE_DB_URL; the README's blocks run as written against stand-ins for pg_cron, pg_net
// and Vault (support/supabase-extensions.ts), and the job's command is run by hand.

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

describeDirectOnly("POST /outbox/events while the database is away", () => {
  it("answers 503 with Retry-After 1 and the API's message, and no stack", async () => {
    const closed = await freePort();
    const outbox = await startServer({ SUPABASE_DB_URL: `postgres://postgres:postgres@127.0.0.1:${closed}/postgres` }, "functions/outbox/index.ts");
    try {
      const response = await fetch(`${outbox.url}/outbox/events`, { method: "POST" });
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("1");
      expect(await response.json()).toEqual({ message: "service temporarily unavailable" });
    } finally {
      await outbox.stop();
    }
  });
});

/** supabase/README.md's ```sql block that holds `text`, as written. */
const readmeBlock = (text: string) =>
  [...readFileSync(new URL("../../supabase/README.md", import.meta.url), "utf8").matchAll(/^```sql\n([\s\S]*?)^```$/gm)].map((match) => match[1]).find((block) => block.includes(text))!;

describeDirectOnly("the events job, as supabase/README.md schedules it", () => {
  let sql: postgres.Sql;
  const sent = async () => (await sql<{ url: string }[]>`select url from net.http_request_queue order by id`).map((request) => request.url);
  const runJob = async (name: string) => {
    const [{ command }] = await sql<{ command: string }[]>`select command from cron.job where jobname = ${name}`;
    await sql.unsafe(command);
  };

  beforeAll(async () => {
    sql = postgres(database.url, { max: 1, onnotice: () => {} });
    await sql.unsafe(SUPABASE_EXTENSIONS_SQL);
    // The outbox pass's block stores the project's URL in Vault; the events job reads it.
    await sql.unsafe(readmeBlock("cron.schedule('cadence-outbox'"));
    await sql.unsafe(readmeBlock("cron.schedule('cadence-events'"));
    await openTestEndpoint(sql, { notifyEmail: "job@example.com" }).then((endpoint) => endpoint.receiver.close());
  });
  afterAll(() => sql?.end());

  it("runs every second, and prunes pg_cron's log of its runs to a week", async () => {
    expect(await sql`select jobname, schedule from cron.job order by jobid`).toEqual([
      { jobname: "cadence-outbox", schedule: "* * * * *" },
      { jobname: "cadence-events", schedule: "1 seconds" },
      { jobname: "cadence-cron-log", schedule: "0 3 * * *" },
    ]);
    await sql`insert into cron.job_run_details (end_time) values (now() - interval '8 days'), (now() - interval '1 day')`;
    await runJob("cadence-cron-log");
    expect((await sql`select count(*)::integer as runs from cron.job_run_details`)[0].runs).toBe(1);
  });

  it("calls nothing while no endpoint is due with events owed", async () => {
    await runJob("cadence-events");
    expect(await sent()).toEqual([]);
  });

  it("calls the outbox function's /outbox/events once an event is owed", async () => {
    await sql`insert into public.accounts (email, display_name) values ('job-owed@example.com', 'Job')`;
    await runJob("cadence-events");
    expect(await sent()).toEqual(["https://<project-ref>.supabase.co/functions/v1/outbox/events"]);
  });
});
