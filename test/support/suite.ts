import { afterAll, beforeAll } from "vitest";
import type { Deps } from "../../functions/app/deps.ts";
import { testApp } from "./app.ts";
import { freshDatabase, type TestDatabase } from "./database.ts";

/**
 * A fresh database and the app over it for the calling suite: made before its tests, dropped after.
 * Its fields are set once `beforeAll` has run, so read them inside tests.
 *
 * @example
 * const suite = suiteApp();
 * it("serves groups", async () => expect((await suite.request("/api/v2/groups")).status).toBe(200));
 */
export function suiteApp(overrides: Partial<Deps> = {}) {
  const suite = {} as { database: TestDatabase } & ReturnType<typeof testApp>;
  beforeAll(async () => {
    const database = await freshDatabase();
    Object.assign(suite, { database }, testApp(database.db, overrides));
  });
  afterAll(() => suite.database?.drop());
  return suite;
}
