import { PGlite } from "@electric-sql/pglite";
import type { Database } from "./database.ts";

/**
 * Embedded Postgres (WASM) stored in `dataDir`, or in memory when `dataDir` is undefined.
 *
 * @example
 * const db = await openPglite(".data");
 */
export async function openPglite(dataDir?: string): Promise<Database> {
  const pg = await PGlite.create(dataDir);
  return {
    async query<Row>(text: string, params: readonly unknown[] = []) {
      const result = await pg.query<Row>(text, params as unknown[]);
      return result.rows;
    },
    async script(text: string) {
      await pg.transaction(async (tx) => {
        await tx.exec(text);
      });
    },
    close: () => pg.close(),
  };
}
