/**
 * A timer that must not keep the process (or an edge worker) alive: Node's `unref()`, Deno's
 * `Deno.unrefTimer`, so the same module runs under the tests (Node) and the server (Deno).
 *
 * @example
 * unrefTimer(setInterval(refresh, 30_000));
 */
export function unrefTimer(timer: unknown): void {
  if (typeof timer === "object" && timer !== null && "unref" in timer) (timer as { unref(): void }).unref();
  else (globalThis as { Deno?: { unrefTimer(id: number): void } }).Deno?.unrefTimer(timer as number);
}
