/**
 * Imports a module of this app that only a local or self-hosted server runs (the local default
 * database, the `REDIS_URL` store's node-redis), when the configuration chooses it. The specifier is
 * computed, so bundlers (`deno bundle`, Supabase's deploy) leave the module and its dependencies out
 * of the edge function, which never runs them: node-redis tripled the edge path's start-up import
 * time when it was imported there, and the edge runtime cannot start a database server.
 *
 * @example
 * const { openLocalPostgres } = await importOptional<typeof import("./db/local-postgres.ts")>(new URL("./db/local-postgres.ts", import.meta.url));
 */
export function importOptional<T>(module: URL): Promise<T> {
  return import(module.href);
}
