import { errorMessage, type Logger } from "../log.ts";
import type { StaffBackend } from "./embedded-database.ts";
import { type DroppedConnections, droppedConnections } from "./sql-port/dropped-connections.ts";
import { errorResponse } from "./sql-port/backend-messages.ts";
import { equalInTime, scramSecret } from "./sql-port/scram.ts";
import { type Connection, type Served, type SessionContext, StaffSession } from "./sql-port/staff-session.ts";

/** Sessions past their startup packet at once, as Postgres' (and Supabase's local) max_connections. */
export const MAX_SESSIONS = 100;
/** Connections at once, sessions and those still starting or cancelling: twice max_connections, as Postgres' postmaster allows. */
export const MAX_CONNECTIONS = 2 * MAX_SESSIONS;
/** A connection not authenticated after this long is closed, as by Postgres' authentication_timeout. */
export const AUTHENTICATION_TIMEOUT_MS = 60_000;
/** How long the port waits to accept again after an accept failed (out of descriptors during a flood). */
export const ACCEPT_RETRY_MS = 250;

export interface SqlPortOptions {
  port: number;
  /**
   * How long a staff transaction may keep the backend once an API statement waits for it: then it
   * is rolled back and its session ended, as Postgres' idle_in_transaction_session_timeout does.
   */
  graceMs: number;
  log: Logger;
}

/** A TCP connection, as much of Deno's as the port uses. */
interface TcpConn {
  readonly readable: ReadableStream<Uint8Array>;
  readonly writable: WritableStream<Uint8Array>;
  write(bytes: Uint8Array): Promise<number>;
  setNoDelay(noDelay: boolean): void;
  close(): void;
}

/**
 * Deno's TCP listener, typed here because tsc checks this file (through runtime.ts) without Deno's
 * types. Deno.listen, not node:net: Deno's node:net server stops accepting for good at the first
 * accept error (measured: after a flood past `ulimit -n` it never accepted again, and said
 * nothing), where a Deno listener's accept fails once and can be called again.
 */
function listen(options: { hostname: string; port: number; transport: "tcp" }) {
  const { Deno } = globalThis as unknown as {
    Deno: { listen(options: { hostname: string; port: number; transport: "tcp" }): { addr: { port: number }; accept(): Promise<TcpConn>; close(): void } };
  };
  return Deno.listen(options);
}

/** What the port serves once the embedded database is migrated. */
export interface SqlPortService {
  backend: StaffBackend;
  /** The `postgres` role's password (SQL_PASSWORD): SCRAM-SHA-256 as Postgres asks it. */
  password: string;
}

export interface SqlPort {
  port: number;
  /** Starts authenticating and serving sessions on `service`; until then they wait. */
  serve(service: SqlPortService): Promise<void>;
  close(): Promise<void>;
}

/**
 * Postgres' wire protocol on 127.0.0.1, for psql and other clients, onto the same PGlite the API
 * serves (db/sql-port/staff-session.ts runs each connection). Its door is kept as Postgres keeps
 * its own: every declared length checked (db/sql-port/protocol-framing.ts), SCRAM-SHA-256 for the
 * `postgres` role (db/sql-port/scram.ts), caps on connections and on unauthenticated time, and
 * CancelRequests honoured. The port is taken before PGlite opens, so a port in use stops the start
 * at once; sessions wait for `serve`. An accept that fails (no descriptor left during a flood) is
 * logged and tried again, so the port accepts again once the flood is over.
 *
 * @example
 * const sql = await openSqlPort({ port: 54322, graceMs: 500, log });
 * await sql.serve({ backend, password: "postgres" }); // once migrated
 */
export async function openSqlPort(options: SqlPortOptions): Promise<SqlPort> {
  const listener = listen({ hostname: "127.0.0.1", port: options.port, transport: "tcp" });
  const drops: DroppedConnections = droppedConnections(options.log);
  const connections = new Map<TcpConn, StaffSession>();
  const admitted = new Set<StaffSession>();
  const keys = new Map<number, { session: StaffSession; secret: Uint8Array }>();
  let serve!: (served: Served) => void;
  const served = new Promise<Served>((resolve) => (serve = resolve));
  let closed = false;
  let retry: ReturnType<typeof setTimeout> | undefined;

  const context: SessionContext = {
    served,
    graceMs: options.graceMs,
    log: options.log,
    drops,
    admit(session) {
      if (admitted.size >= MAX_SESSIONS) return false;
      admitted.add(session);
      return true;
    },
    register(session, keyLength) {
      let processId: number;
      do processId = crypto.getRandomValues(new Uint32Array(1))[0] & 0x7fffffff; while (processId === 0 || keys.has(processId));
      const secret = crypto.getRandomValues(new Uint8Array(keyLength));
      keys.set(processId, { session, secret });
      return { processId, secret };
    },
    cancel(processId, secret) {
      const key = keys.get(processId);
      if (key && equalInTime(key.secret, secret)) key.session.cancel();
      else drops.note("a cancel request naming no session");
    },
    leave(session) {
      admitted.delete(session);
      for (const [processId, key] of keys) if (key.session === session) keys.delete(processId);
    },
  };

  function accept(conn: TcpConn) {
    if (closed || connections.size >= MAX_CONNECTIONS) {
      drops.note("too many connections");
      conn.write(errorResponse({ severity: "FATAL", code: "53300", message: "sorry, too many clients already" })).finally(() => conn.close()).catch(() => {});
      return;
    }
    conn.setNoDelay(true);
    const session = new StaffSession(connectionOf(conn), context, AUTHENTICATION_TIMEOUT_MS);
    connections.set(conn, session);
    (async () => {
      try {
        for await (const chunk of conn.readable) await session.receive(chunk);
      } catch {
        // A reset or a connection the session closed: either way it is over.
      } finally {
        connections.delete(conn);
        session.closed();
      }
    })();
  }

  async function acceptLoop() {
    while (!closed) {
      let conn: TcpConn;
      try {
        conn = await listener.accept();
      } catch (error) {
        if (closed) return;
        drops.note(`accept failed: ${errorMessage(error)}`);
        await new Promise((resolve) => (retry = setTimeout(resolve, ACCEPT_RETRY_MS)));
        continue;
      }
      accept(conn);
    }
  }
  void acceptLoop();

  return {
    port: listener.addr.port,
    async serve({ backend, password }) {
      backend.onRestart((restart) => {
        for (const session of connections.values()) session.backendLost(restart);
      });
      serve({ backend, secret: await scramSecret(password), mockNonce: crypto.getRandomValues(new Uint8Array(32)) });
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      listener.close();
      for (const session of connections.values()) session.closed();
      drops.close();
    },
  };
}

/** A Deno connection as a session writes to it: in order, and closed once what was written is sent. */
function connectionOf(conn: TcpConn): Connection {
  const writer = conn.writable.getWriter();
  let ended = false;
  return {
    write(bytes) {
      if (!ended) writer.write(bytes).catch(() => {});
    },
    end() {
      if (ended) return;
      ended = true;
      writer.close().catch(() => {}).finally(() => {
        try {
          conn.close();
        } catch {
          // Closed already, with the writer.
        }
      });
    },
  };
}
