/**
 * Descriptors the server holds, or may open, for everything but its clients, by database: the
 * runtime itself (about 20), the database, Redis, outgoing HTTPS (Resend, Upstash, Supabase Auth)
 * and DNS. Measured: PGlite held 196 descriptors once listening and 198 after every route had been
 * called (it keeps its data files open); the Postgres path 23 once listening, about 33 besides its
 * clients once its pool of 10 was open. Each reserve leaves about 100 more for what was not measured.
 */
export const DESCRIPTOR_RESERVE = { pglite: 320, postgres: 128 } as const;

/**
 * The cap where the limit is unknown (Deno started by hand, not by `npm start`, which reports it):
 * a benchmark's or a small fleet's; set FILE_DESCRIPTOR_LIMIT or MAX_CONNECTIONS for more. Should it
 * outrun a low limit, the accept check reopens the listener (http/self-hosted-server.ts).
 */
export const UNKNOWN_LIMIT_CONNECTIONS = 256;

/** The fewest connections a cap allows, so a limit too low for the reserve still serves someone. */
export const MIN_CONNECTIONS = 8;

/**
 * How many client connections the self-hosted server holds at once: what the descriptor limit
 * leaves after the reserve. Past the cap a new connection is closed as soon as it is accepted, so
 * the process never meets EMFILE in its accept loop, which ended Deno.serve (an uncaught error) and
 * stops node:http's accept loop for good under Deno.
 *
 * @example
 * connectionCap(1024, "postgres"); // 896
 */
export function connectionCap(limit: number | undefined, database: keyof typeof DESCRIPTOR_RESERVE): number {
  if (limit === undefined) return UNKNOWN_LIMIT_CONNECTIONS;
  return Math.max(MIN_CONNECTIONS, limit - DESCRIPTOR_RESERVE[database]);
}
