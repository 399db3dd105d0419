/** Supabase's Edge Runtime global; absent under plain Deno (`npm start`) and Node. */
declare const EdgeRuntime: { waitUntil(promise: Promise<unknown>): void } | undefined;

/**
 * On Supabase, a way to keep the worker alive until background work settles
 * (`EdgeRuntime.waitUntil`): a worker may otherwise be stopped once its responses are sent.
 * Elsewhere undefined: the process runs until it is stopped.
 *
 * @example
 * const keepAlive = edgeRuntimeKeepAlive();
 * keepAlive?.(flush());
 */
export function edgeRuntimeKeepAlive(): ((work: Promise<unknown>) => void) | undefined {
  if (typeof EdgeRuntime === "undefined") return undefined;
  const runtime = EdgeRuntime;
  return (work) => runtime.waitUntil(work);
}

/** Whether this process is a worker of Supabase's Edge Runtime, not `npm start` or a test. */
export function onEdgeRuntime(): boolean {
  return typeof EdgeRuntime !== "undefined";
}
