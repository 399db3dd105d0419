/**
 * Imports a module of this app that only a local or self-hosted server runs (PGlite, the
 * `REDIS_URL` store's node-redis), when the configuration chooses it. The specifier is computed,
 * so bundlers (`deno bundle`, Supabase's deploy) leave the module and its dependencies out of the
 * edge function, which never runs them: PGlite alone (15.6 MB of WASM and data) would put it past
 * Supabase's size limit, and node-redis tripled the edge path's start-up import time when it was
 * imported there.
 *
 * @example
 * const { openPglite } = await importOptional<typeof import("./db/pglite.ts")>(new URL("./db/pglite.ts", import.meta.url));
 */
export function importOptional<T>(module: URL): Promise<T> {
  return import(module.href);
}
