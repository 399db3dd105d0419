import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import postgres from "postgres";
import type { TestProject } from "vitest/node";
import { startPostgresServer } from "./postgres-server.ts";

const root = new URL("../../", import.meta.url);
export const TEMPLATE = "cadence_template";

declare module "vitest" {
  export interface ProvidedContext {
    /** Superuser URL of the throwaway cluster's `postgres` database. */
    pgAdminUrl: string;
  }
}

/**
 * One throwaway Postgres per test run. The template database gets the Supabase shim, then our
 * migrations and seed through the real Supabase CLI, exactly as operators deploy; each test
 * database is a copy of it.
 */
export default async function setup(project: TestProject) {
  const server = await startPostgresServer();
  const admin = postgres(server.url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${TEMPLATE}`);
  await admin.end();

  const templateUrl = server.url.replace(/\/postgres$/, `/${TEMPLATE}`);
  const template = postgres(templateUrl, { max: 1, onnotice: () => {} });
  await template.unsafe(readFileSync(new URL("sql/supabase-shim.sql", root), "utf8"));
  await template.end();
  execFileSync(
    new URL("node_modules/.bin/supabase", root).pathname,
    ["db", "push", `--remote=${templateUrl}`, "--include-seed", "--yes"],
    { cwd: root.pathname, stdio: "pipe", env: { ...process.env, SUPABASE_TELEMETRY_DISABLED: "1", DO_NOT_TRACK: "1" } },
  );

  project.provide("pgAdminUrl", server.url);
  return () => server.stop();
}
