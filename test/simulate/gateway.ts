/// <reference lib="deno.ns" />
/**
 * What stands between the fleet and the function on Supabase: the gateway, which takes every
 * kiosk's connection itself and reaches the function over a pool of connections of its own. The
 * kiosks' requests share at most `connections` connections to the server, each reused while it is
 * kept alive, and a request waits for one to free up when all are busy; that wait is part of what
 * the kiosk measures, and of its timeout.
 *
 * Without it each kiosk's call had a connection of its own while it waited: when the boot of 50,000
 * kiosks outran the server on a shared machine, tens of thousands were open at once, and the
 * simulator (and the server) ran out of descriptors under a hard limit of 20,000 (`Failed to spawn
 * '/usr/bin/psql': Too many open files`).
 *
 * A request that waits longer than `queueMs` for a connection is answered by the gateway itself, as
 * HAProxy answers one past its `timeout queue` (functions/production/haproxy.cfg's `http-error status
 * 503`): `503 {"message":"service temporarily unavailable"}` with `Retry-After: 5`. A front that
 * queues without a bound leaves a fleet that outruns the server waiting until each kiosk gives up.
 *
 * @example
 * const gateway = openGateway(1_000, 1_000);
 * const response = await gateway.fetch(url, { signal: AbortSignal.timeout(10_000) });
 */
export function openGateway(connections: number, queueMs?: number) {
  const client = Deno.createHttpClient({ poolMaxIdlePerHost: connections });
  let busy = 0;
  let most = 0;
  let refused = 0;
  const waiting: Array<() => void> = [];

  /** A slot of the pool, once one is free (true); false once `queueMs` has passed; rejects if `signal` aborts first. */
  function acquire(signal: AbortSignal | undefined): Promise<boolean> {
    if (busy < connections) {
      busy++;
      most = Math.max(most, busy);
      return Promise.resolve(true);
    }
    return new Promise((resolve, reject) => {
      const leave = () => {
        waiting.splice(waiting.indexOf(turn), 1);
        signal?.removeEventListener("abort", aborted);
        clearTimeout(timer);
      };
      const turn = () => {
        signal?.removeEventListener("abort", aborted);
        clearTimeout(timer);
        resolve(true);
      };
      const aborted = () => {
        leave();
        reject(signal!.reason);
      };
      const timer = queueMs === undefined ? undefined : setTimeout(() => {
        leave();
        resolve(false);
      }, queueMs);
      signal?.addEventListener("abort", aborted, { once: true });
      waiting.push(turn);
    });
  }

  function release() {
    const next = waiting.shift();
    if (next) next();
    else busy--;
  }

  return {
    /**
     * `fetch` through the pool: the body is read before the slot is given back; `waitedMs` is the
     * wait for the slot; `byGateway` when no slot came within `queueMs` and the gateway answered.
     */
    async fetch(url: string, init: RequestInit & { signal?: AbortSignal }): Promise<{ response: Response; body: string; waitedMs: number; byGateway: boolean }> {
      const asked = performance.now();
      const slot = await acquire(init.signal);
      const waitedMs = performance.now() - asked;
      if (!slot) {
        refused++;
        const body = JSON.stringify({ message: "service temporarily unavailable" });
        return { response: new Response(body, { status: 503, headers: { "content-type": "application/json", "retry-after": "5" } }), body, waitedMs, byGateway: true };
      }
      try {
        const response = await fetch(url, { ...init, client });
        return { response, body: await response.text(), waitedMs, byGateway: false };
      } finally {
        release();
      }
    },
    /** The most requests that held a connection at once. */
    most: () => most,
    /** Requests the gateway answered 503 itself, having waited `queueMs` for a connection. */
    refused: () => refused,
    close: () => client.close(),
  };
}

export type Gateway = ReturnType<typeof openGateway>;
