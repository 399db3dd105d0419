/**
 * The Web Worker that runs PGlite for the server (db/pglite-thread.ts starts it). PGlite runs a
 * statement on the thread that calls it, without yielding, and cannot be interrupted: run on the
 * server's own thread, a staff `select pg_sleep(5)` froze every route for 5 s. Here it blocks only
 * this worker; the server's thread keeps serving, and a statement that must stop (psql's Ctrl-C)
 * stops with the worker, which the server terminates and starts again.
 *
 * One request at a time, in the order received; each answer names its request's id.
 */
import { errorMessage } from "../log.ts";
import { openPglite, type Pglite } from "./pglite.ts";
import type { FromWorker, SerialisedError, ToWorker } from "./pglite-thread.ts";

interface WorkerScope {
  postMessage(message: FromWorker, transfer?: Transferable[]): void;
  onmessage: ((event: MessageEvent<ToWorker>) => void) | null;
}

const scope = globalThis as unknown as WorkerScope;

/** Raw answers reach the server's thread in pieces of about this size: fewer messages, never the whole result held twice. */
const RAW_PIECE_BYTES = 64 * 1024;

/** PGlite's answer to a startup packet carries the server's parameters (server_version and the rest) that every session reports. */
const STARTUP_PACKET = (() => {
  const body = new TextEncoder().encode("user\0postgres\0database\0postgres\0\0");
  const packet = new Uint8Array(8 + body.length);
  const view = new DataView(packet.buffer);
  view.setInt32(0, packet.length);
  view.setInt32(4, 3 << 16);
  packet.set(body, 8);
  return packet;
})();

let pglite: Pglite | undefined;
let work: Promise<void> = Promise.resolve();

scope.onmessage = (event) => {
  const request = event.data;
  work = work.then(() => handle(request));
};

async function handle(request: ToWorker): Promise<void> {
  try {
    await answer(request);
  } catch (error) {
    if (isFatal(error)) {
      // PGlite's Postgres exited or its WASM trapped: nothing it would answer now can be trusted.
      scope.postMessage({ kind: "crashed", message: errorMessage(error) });
      return;
    }
    if (request.kind === "open") scope.postMessage({ kind: "failed", message: errorMessage(error) });
    else scope.postMessage({ kind: "error", id: request.id, error: serialise(error) });
  }
}

async function answer(request: ToWorker): Promise<void> {
  if (request.kind === "open") {
    pglite = await openPglite(request.dataDir);
    const startup = await pglite.pg.execProtocolRaw(STARTUP_PACKET);
    scope.postMessage({ kind: "ready", startup }, [startup.buffer as ArrayBuffer]);
    return;
  }
  const { pg, db } = pglite!;
  switch (request.kind) {
    case "query": {
      scope.postMessage({ kind: "rows", id: request.id, rows: await db.query(request.text, request.params) });
      return;
    }
    case "script": {
      await db.script(request.text);
      scope.postMessage({ kind: "done", id: request.id, inTransaction: pg.isInTransaction() });
      return;
    }
    case "raw": {
      let pieces: Uint8Array[] = [];
      let size = 0;
      const flush = () => {
        if (size === 0) return;
        const bytes = new Uint8Array(size);
        let offset = 0;
        for (const piece of pieces) {
          bytes.set(piece, offset);
          offset += piece.length;
        }
        scope.postMessage({ kind: "data", id: request.id, bytes }, [bytes.buffer]);
        pieces = [];
        size = 0;
      };
      await pg.runExclusive(() =>
        pg.execProtocolRawStream(request.bytes, {
          // A view of PGlite's memory, valid during this call only: copied.
          onRawData: (data) => {
            pieces.push(data.slice());
            size += data.length;
            if (size >= RAW_PIECE_BYTES) flush();
          },
        })
      );
      flush();
      scope.postMessage({ kind: "done", id: request.id, inTransaction: pg.isInTransaction() });
      return;
    }
    case "reset": {
      // A session may leave the extended protocol mid-exchange (an error skips to the next Sync):
      // a Sync first, so the statements below are read.
      await pg.execProtocolRaw(SYNC);
      if (pg.isInTransaction()) await pg.exec("rollback");
      await pg.exec("set session authorization default; reset all");
      scope.postMessage({ kind: "done", id: request.id, inTransaction: false });
      return;
    }
    case "close": {
      await pg.close();
      scope.postMessage({ kind: "done", id: request.id, inTransaction: false });
      return;
    }
  }
}

const SYNC = new Uint8Array([0x53, 0, 0, 0, 4]);

/** Emscripten's exit (Postgres called exit: a FATAL, or end of input inside COPY) and WASM traps. */
function isFatal(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === "ExitStatus" || error instanceof WebAssembly.RuntimeError;
}

const ERROR_FIELDS = ["code", "severity", "detail", "hint", "position", "where", "schema", "table", "column", "dataType", "constraint", "routine"] as const;

/** An error as data: structured cloning keeps an Error's message but drops a DatabaseError's SQLSTATE and fields. */
function serialise(error: unknown): SerialisedError {
  const fields: SerialisedError = { message: errorMessage(error) };
  for (const field of ERROR_FIELDS) {
    const value = (error as Record<string, unknown> | null)?.[field];
    if (typeof value === "string") fields[field] = value;
  }
  return fields;
}
