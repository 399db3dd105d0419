import { connect } from "node:net";
import postgres from "postgres";
import { describe, expect, it, vi } from "vitest";
import { scopedDatabase } from "../support/database.ts";
import { startServer } from "../support/server.ts";

/** Whether `host:port` accepts a TCP connection. */
function accepts(host: string, port: number) {
  return new Promise<boolean>((resolve) => {
    const socket = connect(port, host);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

describe("the admin listener (ADMIN_PORT: /live, /ready, /metrics)", () => {
  const database = scopedDatabase();

  it("is opened only when ADMIN_PORT is set", async () => {
    const server = await startServer(database.serverEnv);
    try {
      expect(server.adminUrl).toBeUndefined();
      expect(server.logs()).not.toContain('"adminPort"');
    } finally {
      await server.stop();
    }
  });

  it("listens on 127.0.0.1 alone, even where the API listens on every interface", async () => {
    const server = await startServer({ ...database.serverEnv, HOST: "0.0.0.0", ADMIN_PORT: "0" });
    try {
      const api = Number(new URL(server.url).port);
      const admin = Number(new URL(server.adminUrl!).port);
      // 127.0.0.2 is another address of this machine: the API's 0.0.0.0 takes it, the admin's 127.0.0.1 does not.
      expect(await accepts("127.0.0.2", api)).toBe(true);
      expect(await accepts("127.0.0.2", admin)).toBe(false);
      expect(await (await fetch(`${server.adminUrl}/live`)).json()).toEqual({ status: "live" });
    } finally {
      await server.stop();
    }
  });

  it("answers /ready 200 once started, with the database's state beside it, and only GET or HEAD", async () => {
    const server = await startServer({ ...database.serverEnv, ADMIN_PORT: "0" });
    try {
      await vi.waitFor(async () => expect((await fetch(`${server.adminUrl}/ready`)).status).toBe(200), { timeout: 120_000, interval: 50 });
      expect(await (await fetch(`${server.adminUrl}/ready`)).json()).toEqual({ status: "ready", waitingFor: [], database: "available" });
      expect((await fetch(`${server.adminUrl}/ready`, { method: "POST" })).status).toBe(405);
      expect((await fetch(`${server.adminUrl}/nothing`)).status).toBe(404);
    } finally {
      await server.stop();
    }
  });

  it("answers /ready 503 naming the migrations while SUPABASE_DB_URL lacks one (the server never migrates it), and 200 once it is applied", async () => {
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    const [latest] = await sql`select version, statements, name from supabase_migrations.schema_migrations order by version desc limit 1`;
    await sql`delete from supabase_migrations.schema_migrations where version = ${latest.version}`;
    const server = await startServer({ SUPABASE_DB_URL: database.url, ADMIN_PORT: "0" });
    try {
      // The venue registrations' first read answers within moments; the migrations wait for the operator.
      await vi.waitFor(async () => {
        const starting = await fetch(`${server.adminUrl}/ready`);
        expect({ status: starting.status, body: await starting.json() }).toEqual({ status: 503, body: { status: "starting", waitingFor: ["migrations"], database: "available" } });
      }, { timeout: 120_000, interval: 50 });
      expect((await fetch(`${server.adminUrl}/live`)).status).toBe(200);
      // Logged when the first look at the migrations answers, which /ready does not wait for.
      await vi.waitFor(() => expect(server.logs()).toContain(`"event":"migrations_pending","missing":["${latest.version}_${latest.name}.sql"]`), { timeout: 60_000, interval: 50 });
      await sql`insert into supabase_migrations.schema_migrations ${sql(latest)}`;
      await vi.waitFor(async () => expect((await fetch(`${server.adminUrl}/ready`)).status).toBe(200), { timeout: 120_000, interval: 250 });
    } finally {
      await server.stop();
      await sql.end();
    }
  });
});
