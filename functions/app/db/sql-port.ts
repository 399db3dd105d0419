import { createServer, type Socket } from "node:net";
import type { PGlite } from "@electric-sql/pglite";
import { errorMessage, type Logger } from "../log.ts";
import type { BackendTurns } from "./backend-turns.ts";

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;

/** What the port serves, once PGlite is open and migrated. */
export interface EmbeddedBackend {
  pg: PGlite;
  turns: BackendTurns;
}

export interface SqlPortOptions {
  port: number;
  /**
   * How long a staff transaction may keep the backend once an API statement waits for it: then it
   * is rolled back and its session ended, as Postgres' idle_in_transaction_session_timeout does.
   */
  graceMs: number;
  log: Logger;
}

export interface SqlPort {
  port: number;
  /** Starts running sessions' messages on `backend`; until then they wait. */
  serve(backend: EmbeddedBackend): void;
  close(): Promise<void>;
}

/**
 * Postgres' wire protocol on 127.0.0.1, for psql and other clients, onto the same PGlite the API
 * serves: each session's message runs in a turn of the one backend (db/backend-turns.ts). A
 * session keeps its turn until Postgres is ready for its next query outside a transaction, so an
 * API statement never runs inside a staff transaction or between a client's Parse and its Sync.
 * Each turn ends with the session's settings reset, so a staff `set role` or `set search_path`
 * never reaches an API statement. The port is taken before PGlite opens, so a port in use stops
 * the start at once; sessions wait for `serve`.
 *
 * @example
 * const sql = await openSqlPort({ port: 54322, graceMs: 500, log });
 * sql.serve({ pg, turns }); // once migrated
 */
export function openSqlPort(options: SqlPortOptions): Promise<SqlPort> {
  const sessions = new Set<Socket>();
  let serve!: (backend: EmbeddedBackend) => void;
  const backend = new Promise<EmbeddedBackend>((resolve) => (serve = resolve));
  const server = createServer((socket) => {
    sessions.add(socket);
    socket.on("close", () => sessions.delete(socket));
    void backend.then((ready) => staffSession(socket, ready, options));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, "127.0.0.1", () => {
      server.off("error", reject);
      const address = server.address();
      resolve({
        port: typeof address === "object" && address ? address.port : options.port,
        serve,
        close: () =>
          new Promise((closed) => {
            for (const socket of sessions) socket.destroy();
            server.close(() => closed());
          }),
      });
    });
  });
}

/** One client connection: reads whole protocol messages and runs them in turns. */
function staffSession(socket: Socket, { pg, turns }: EmbeddedBackend, { graceMs, log }: SqlPortOptions) {
  let buffer: Uint8Array = new Uint8Array(0);
  let started = false;
  let release: (() => void) | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  let ended = false;

  const contended = () => {
    graceTimer ??= setTimeout(() => {
      running = running.then(() => endHeldTransaction());
    }, graceMs);
  };

  async function giveBack() {
    clearTimeout(graceTimer);
    graceTimer = undefined;
    if (!release) return;
    // The turn keeps every other user away; exec takes PGlite's own lock itself.
    if (pg.isInTransaction()) await pg.exec("rollback");
    await pg.exec("set session authorization default; reset all");
    release();
    release = undefined;
  }

  async function endHeldTransaction() {
    if (!release || ended) return;
    log("warn", "sql_session_ended", { reason: "its transaction held the database while the API waited", graceMs });
    socket.end(fatal("25P03", "terminating connection due to idle-in-transaction timeout: the API needed the database"));
    ended = true;
    await giveBack();
  }

  async function run(type: number, message: Uint8Array) {
    if (ended) return;
    release ??= await turns.take(contended);
    await pg.runExclusive(() =>
      pg.execProtocolRawStream(message, { onRawData: (data) => void (socket.writable && socket.write(data)) })
    );
    // 'Q' (a query) and 'S' (Sync) end with ReadyForQuery; anything else is mid-exchange.
    const ready = type === 0x51 || type === 0x53 || type === 0;
    if (ready && !pg.isInTransaction()) await giveBack();
  }

  function queue(type: number, message: Uint8Array) {
    running = running.then(() => run(type, message)).catch((error) => {
      log("error", "sql_session_failed", { error: errorMessage(error) });
      ended = true;
      socket.destroy();
      return giveBack();
    });
  }

  socket.on("data", (chunk: Uint8Array) => {
    buffer = concat(buffer, chunk);
    for (;;) {
      const header = started ? 5 : 4;
      if (buffer.length < header) return;
      const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
      const length = started ? 1 + view.getInt32(1) : view.getInt32(0);
      if (buffer.length < length) return;
      const message = buffer.slice(0, length);
      buffer = buffer.slice(length);
      if (!started) {
        const code = view.getInt32(4);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          socket.write(new TextEncoder().encode("N"));
          continue;
        }
        if (code === CANCEL_REQUEST) {
          socket.end();
          return;
        }
        started = true;
        queue(0, message);
        continue;
      }
      const type = message[0];
      if (type === 0x58) {
        socket.end();
        return;
      }
      queue(type, message);
    }
  });
  socket.on("error", () => socket.destroy());
  socket.on("close", () => {
    ended = true;
    running = running.then(() => giveBack());
  });
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}

/** A FATAL ErrorResponse: the client shows it, as it shows Postgres' own session timeouts. */
function fatal(code: string, text: string): Uint8Array {
  const fields = new TextEncoder().encode(`SFATAL\0VFATAL\0C${code}\0M${text}\0\0`);
  const message = new Uint8Array(5 + fields.length);
  message[0] = 0x45;
  new DataView(message.buffer).setInt32(1, 4 + fields.length);
  message.set(fields, 5);
  return message;
}
