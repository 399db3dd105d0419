/// <reference lib="deno.ns" />
// Baseline (2), the limit for an endpoint that must touch the database: a bare Deno.serve running
// `select 1` per request through the app's own driver and pool (openPostgres). Arguments: the
// database URL and the pool size the app uses. Announces its port as the entry does.
import { openPostgres } from "../../../functions/app/db/postgres.ts";

const [url, poolSize] = Deno.args;
const db = openPostgres(url, { max: Number(poolSize) });
const headers = { "content-type": "application/json" };

Deno.serve(
  { port: 0, hostname: "127.0.0.1", onListen: ({ port }) => console.log(JSON.stringify({ event: "listening", port })) },
  async () => {
    const [row] = await db.query<{ one: number }>("select 1 as one");
    return new Response(JSON.stringify(row), { headers });
  },
);
