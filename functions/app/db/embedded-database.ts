import type { Logger } from "../log.ts";
import { backendTurns, type BackendTurns } from "./backend-turns.ts";
import type { Database, QueryOptions } from "./database.ts";
import { BackendRestarted, type Restart, startPgliteThread } from "./pglite-thread.ts";
import { DatabaseUnavailable } from "./unavailable.ts";

/** What the staff's SQL port (db/sql-port.ts) runs its sessions on: the same backend as the API, in turns. */
export interface StaffBackend {
  turns: BackendTurns;
  /** Runs whole protocol messages in the holder's turn; PGlite's answer streams to `onData`. */
  run(messages: Uint8Array, onData: (bytes: Uint8Array) => void): Promise<{ inTransaction: boolean }>;
  /** Ends the holder's turn cleanly: its transaction rolled back, its settings and role reset. */
  reset(): Promise<void>;
  /** Stops whatever runs now by replacing the backend (db/pglite-thread.ts); `restart.by` is the session that asked. */
  interrupt(restart: Restart): void;
  /** What a startup packet gets from the backend: AuthenticationOk, the server's parameters, BackendKeyData, ReadyForQuery. */
  startupAnswer(): Promise<Uint8Array>;
  /** Hears each replacement of the backend, by a cancel or a crash. */
  onRestart(listener: (restart: Restart) => void): void;
}

/** The embedded database: the API's `Database`, and the backend the SQL port shares with it. */
export interface EmbeddedDatabase {
  db: Database;
  backend: StaffBackend;
}

export interface EmbeddedOptions {
  /** No API statement waits longer than this (milliseconds) from when it was asked, turn included. */
  deadlineMs: number;
  log: Logger;
}

/**
 * PGlite in `dataDir`, run in a worker of its own (db/pglite-thread.ts), so no statement ever
 * blocks the server's thread. The API's statements and the staff's sessions take the one backend
 * in turns (db/backend-turns.ts). An API statement gets an answer, or `DatabaseUnavailable`,
 * within `deadlineMs` of when it was asked, as from a Postgres (db/postgres.ts): a staff
 * statement that holds the backend past it makes the database unavailable to the API, which
 * answers from its last known good answers meanwhile (db/availability.ts), as during an outage.
 *
 * @example
 * const { db, backend } = await openEmbeddedDatabase(".data", { deadlineMs: 2_000, log });
 */
export async function openEmbeddedDatabase(dataDir: string, { deadlineMs, log }: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const thread = await startPgliteThread(dataDir, log);
  const turns = backendTurns();

  /** A turn, or `DatabaseUnavailable` once `ms` have passed: the wait then leaves the queue. */
  function turnWithin(ms: number, reason: string): Promise<() => void> {
    const waiting = new AbortController();
    const timer = setTimeout(() => waiting.abort(new DatabaseUnavailable(reason)), Math.max(0, ms));
    return turns.take({ signal: waiting.signal }).finally(() => clearTimeout(timer));
  }

  /** Rejects with `DatabaseUnavailable` once `ms` have passed, unless `promise` settles first. */
  function within<T>(promise: Promise<T>, ms: number, reason: string): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DatabaseUnavailable(reason)), Math.max(0, ms));
    });
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
  }

  async function query<Row>(text: string, params: readonly unknown[] = [], options: QueryOptions = {}): Promise<Row[]> {
    const deadline = (options.askedAt ?? performance.now()) + deadlineMs;
    const release = await turnWithin(deadline - performance.now(), `a staff SQL session held the embedded database past the ${deadlineMs} ms deadline`);
    // The turn is given back when the worker answers, not at the deadline: the backend is busy until then.
    const answer = thread.request<Row[]>({ kind: "query", text, params }).finally(release);
    try {
      return await within(answer, deadline - performance.now(), `the embedded database did not answer within the ${deadlineMs} ms deadline`);
    } catch (error) {
      if (error instanceof BackendRestarted) throw new DatabaseUnavailable(error.message);
      throw error;
    }
  }

  async function inTurn<T>(run: () => Promise<T>): Promise<T> {
    const release = await turns.take();
    try {
      return await run();
    } finally {
      release();
    }
  }

  return {
    db: {
      query,
      script: (text) => inTurn(() => thread.request({ kind: "script", text })),
      async close() {
        // A staff statement still running is not waited for past the deadline: the next start recovers.
        const release = await turnWithin(deadlineMs, "shutting down").catch(() => undefined);
        if (!release) {
          log("warn", "embedded_database_terminated", { reason: `a staff SQL session held it past ${deadlineMs} ms at shutdown` });
          return thread.terminate();
        }
        await thread.close();
      },
    },
    backend: {
      turns,
      run: async (messages, onData) => ({ inTransaction: await thread.request<boolean>({ kind: "raw", bytes: messages }, onData) }),
      reset: () => thread.request({ kind: "reset" }),
      interrupt: (restart) => thread.restart(restart),
      startupAnswer: () => thread.startupAnswer(),
      onRestart: (listener) => thread.onRestart(listener),
    },
  };
}
