import postgres from "postgres";
import type { TestProject } from "vitest/node";
import { pgbouncerAvailable, startPgBouncer } from "./pgbouncer.ts";
import { installPgtap } from "./pgtap.ts";
import { startPostgresServer } from "./postgres-server.ts";
import { pushMigrations } from "./supabase-migrations.ts";

export const TEMPLATE = "cadence_template";

declare module "vitest" {
  export interface ProvidedContext {
    /** Superuser URL of the throwaway cluster's `postgres` database. */
    pgAdminUrl: string;
    /** Port of PgBouncer (transaction mode) in front of that cluster; 0 without pgbouncer. */
    pgPoolerPort: number;
  }
}

/**
 * One throwaway Postgres per test run, from the binaries `npm start` runs, with PgBouncer in front
 * when installed. The template database gets the Supabase shim, then our migrations and seed
 * through the real Supabase CLI, exactly as operators deploy; each test database is a copy of it.
 * vitest runs this once, for the root project (vitest.config.ts), and each project reads what it
 * provides.
 */
export default async function setup(project: TestProject) {
  // Only the `unit` project chosen (vitest.config.ts): its files need none of this.
  if (project.vitest.projects.every((chosen) => chosen.name === "unit")) return;
  await installPgtap();
  const server = await startPostgresServer();
  try {
    const admin = postgres(server.url, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${TEMPLATE}`);
    await admin.end();

    await pushMigrations(server.url.replace(/\/postgres$/, `/${TEMPLATE}`), { seed: true });

    // The stand-in for Supabase's transaction pooler, for the suites the `pooler` project runs through it.
    const pooler = pgbouncerAvailable() ? await startPgBouncer(server.port) : undefined;
    project.provide("pgAdminUrl", server.url);
    project.provide("pgPoolerPort", pooler?.port ?? 0);
    return async () => {
      await pooler?.stop();
      await server.stop();
    };
  } catch (error) {
    // What did start stops here: a failed setup leaves no cluster running.
    await server.stop();
    throw error;
  }
}
