import { PGlite } from "@electric-sql/pglite";
import { backendTurns, type BackendTurns } from "./backend-turns.ts";
import type { Database } from "./database.ts";

/** PGlite as the app's database, with what the staff's SQL port (db/sql-port.ts) shares with it. */
export interface EmbeddedDatabase {
  db: Database;
  pg: PGlite;
  /** Who holds PGlite's one backend: each API statement takes a turn, as does each staff session. */
  turns: BackendTurns;
}

/**
 * Embedded Postgres (WASM) stored in `dataDir`, or in memory when `dataDir` is undefined.
 *
 * @example
 * const { db } = await openPglite(".data");
 */
export async function openPglite(dataDir?: string): Promise<EmbeddedDatabase> {
  const pg = await PGlite.create(dataDir);
  const turns = backendTurns();
  async function inTurn<T>(run: () => Promise<T>): Promise<T> {
    const release = await turns.take();
    try {
      return await run();
    } finally {
      release();
    }
  }
  return {
    pg,
    turns,
    db: {
      async query<Row>(text: string, params: readonly unknown[] = []) {
        // PGlite runs a statement on this thread without giving the event loop a turn, so Deno.serve
        // reads the requests that arrived meanwhile only afterwards, one at a time, and the kiosk
        // reads never batch (measured: 1.0 read a statement, the 304 at 315-742 req/s with 50
        // connections). One timer turn first lets them join the batch (read-path/batch-while-busy.ts).
        await new Promise((resolve) => setTimeout(resolve, 0));
        return inTurn(async () => (await pg.query<Row>(text, params as unknown[])).rows);
      },
      script: (text: string) => inTurn(() => pg.transaction(async (tx) => void await tx.exec(text))),
      close: () => pg.close(),
    },
  };
}
