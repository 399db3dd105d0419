import { PGlite } from "@electric-sql/pglite";
import type { Database } from "./database.ts";

/** PGlite as a `Database`, with the instance itself for what only PGlite offers (its raw protocol). */
export interface Pglite {
  db: Database;
  pg: PGlite;
}

/**
 * Embedded Postgres (WASM) stored in `dataDir`, or in memory when `dataDir` is undefined, run on
 * the calling thread: every statement blocks that thread until it ends. The server runs it in a
 * worker of its own (db/pglite-worker.ts); the tests and the worker itself use it directly.
 *
 * @example
 * const { db } = await openPglite(".data");
 */
export async function openPglite(dataDir?: string): Promise<Pglite> {
  const pg = await PGlite.create(dataDir);
  return {
    pg,
    db: {
      async query<Row>(text: string, params: readonly unknown[] = []) {
        return (await pg.query<Row>(text, params as unknown[])).rows;
      },
      script: (text: string) => pg.transaction(async (tx) => void await tx.exec(text)),
      close: () => pg.close(),
    },
  };
}
