import type { Logger } from "../log.ts";

/** What the server's thread asks the PGlite worker (db/pglite-worker.ts). */
export type ToWorker =
  | { kind: "open"; dataDir: string }
  | { kind: "query"; id: number; text: string; params: readonly unknown[] }
  | { kind: "script"; id: number; text: string }
  | { kind: "raw"; id: number; bytes: Uint8Array }
  | { kind: "reset"; id: number }
  | { kind: "close"; id: number };

/** A Postgres error as data: its message and whichever of its fields it had. */
export interface SerialisedError {
  message: string;
  [field: string]: string;
}

/** What the worker answers. */
export type FromWorker =
  | { kind: "ready"; startup: Uint8Array }
  | { kind: "failed"; message: string }
  | { kind: "crashed"; message: string }
  | { kind: "rows"; id: number; rows: unknown[] }
  | { kind: "data"; id: number; bytes: Uint8Array }
  | { kind: "done"; id: number; inTransaction: boolean }
  | { kind: "error"; id: number; error: SerialisedError };

/** Why the worker was replaced, and by whom (the session whose Ctrl-C it was), for those whose work it ended. */
export interface Restart {
  reason: string;
  by?: object;
}

/** A request the worker was running or about to run when it was replaced: it will never be answered. */
export class BackendRestarted extends Error {
  override name = "BackendRestarted";
  constructor(readonly restart: Restart) {
    super(`the embedded database restarted: ${restart.reason}`);
  }
}

type WithoutId<T> = T extends unknown ? Omit<T, "id"> : never;
type Request = WithoutId<Exclude<ToWorker, { kind: "open" }>>;

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  onData?: (bytes: Uint8Array) => void;
}

/**
 * PGlite in a worker of its own (db/pglite-worker.ts), seen from the server's thread: requests go
 * in order, answers come back by id, and the worker can be replaced at any moment. Replacing it
 * is how a statement stops: PGlite cannot be interrupted where it runs, but its worker can be
 * terminated. That is a crash of Postgres and nothing worse: PGlite writes its data directory
 * through to the file system as it goes (Emscripten's NODEFS), so what it had written stays, and
 * the next worker opens the directory with Postgres' own WAL recovery: committed transactions
 * survive, the interrupted one is rolled back (checked in test/database/sql-port.test.ts). The
 * reopen, recovery included, took 0.9-1.4 s on this project's 2-core machine.
 */
export interface PgliteThread {
  /** Sends `request` once the worker is ready; `onData` receives a raw request's answer as it comes. */
  request<T>(request: Request, onData?: (bytes: Uint8Array) => void): Promise<T>;
  /** PGlite's answer to a startup packet (AuthenticationOk, the server's parameters, BackendKeyData, ReadyForQuery). */
  startupAnswer(): Promise<Uint8Array>;
  /** Terminates the worker now and starts another on the same directory; every request under way rejects with BackendRestarted. */
  restart(restart: Restart): void;
  /** Hears every restart, after the requests under way have been rejected. */
  onRestart(listener: (restart: Restart) => void): void;
  /** Closes PGlite cleanly (a checkpoint, no recovery at the next start), then the worker. */
  close(): Promise<void>;
  /** Terminates the worker without closing PGlite: the next start recovers, as after a crash. */
  terminate(): void;
}

/**
 * Starts the PGlite worker on `dataDir` and waits until it is open.
 *
 * @example
 * const thread = await startPgliteThread(".data", log);
 * const rows = await thread.request<unknown[]>({ kind: "query", text: "select 1", params: [] });
 */
export async function startPgliteThread(dataDir: string, log: Logger): Promise<PgliteThread> {
  const pending = new Map<number, Pending>();
  const listeners: Array<(restart: Restart) => void> = [];
  let nextId = 0;
  let worker!: Worker;
  let opened!: Promise<Uint8Array>;

  function start() {
    const startedAt = performance.now();
    const current = new Worker(new URL("./pglite-worker.ts", import.meta.url).href, { type: "module" });
    worker = current;
    opened = new Promise<Uint8Array>((resolve, reject) => {
      current.onmessage = (event: MessageEvent<FromWorker>) => {
        if (worker !== current) return;
        const answer = event.data;
        if (answer.kind === "ready") {
          resolve(answer.startup);
          return log("info", "embedded_database_opened", { openMs: Math.round(performance.now() - startedAt) });
        }
        if (answer.kind === "failed") {
          current.terminate();
          const error = new Error(`the embedded database could not open ${dataDir}: ${answer.message}`);
          log("error", "embedded_database_failed", { error: error.message });
          for (const request of pending.values()) request.reject(error);
          pending.clear();
          return reject(error);
        }
        if (answer.kind === "crashed") return restart({ reason: `PGlite stopped: ${answer.message}` });
        const request = pending.get(answer.id);
        if (!request) return;
        if (answer.kind === "data") return request.onData?.(answer.bytes);
        pending.delete(answer.id);
        if (answer.kind === "error") request.reject(Object.assign(new Error(answer.error.message), answer.error));
        else request.resolve(answer.kind === "rows" ? answer.rows : answer.inTransaction);
      };
      // Unhandled, a worker's error ends the whole process.
      current.onerror = (event) => {
        event.preventDefault();
        if (worker === current) restart({ reason: `PGlite's worker failed: ${event.message}` });
      };
    });
    // A failed open is reported to whoever asks next; it must not go unhandled meanwhile.
    opened.catch(() => {});
    current.postMessage({ kind: "open", dataDir } satisfies ToWorker);
  }

  function restart(cause: Restart) {
    worker.terminate();
    const abandoned = [...pending.values()];
    pending.clear();
    for (const request of abandoned) request.reject(new BackendRestarted(cause));
    log("warn", "embedded_database_restarted", { reason: cause.reason });
    start();
    for (const listener of listeners) listener(cause);
  }

  start();
  await opened;

  async function request<T>(request: Request, onData?: (bytes: Uint8Array) => void): Promise<T> {
    const ready = opened;
    // A worker that could not open is started again by the next request (a probe, a session).
    await ready.catch((error) => {
      if (opened === ready) start();
      throw error;
    });
    const id = ++nextId;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject, onData });
      const message = { ...request, id } as ToWorker;
      // The worker takes its requests in order, an open first: one posted while it reopens waits for it there.
      worker.postMessage(message, message.kind === "raw" ? [message.bytes.buffer as ArrayBuffer] : []);
    });
  }

  return {
    request,
    startupAnswer: () => opened,
    restart,
    onRestart: (listener) => void listeners.push(listener),
    async close() {
      await request({ kind: "close" });
      worker.terminate();
    },
    terminate: () => worker.terminate(),
  };
}
