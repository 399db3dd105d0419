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
 * @example
 * const gateway = openGateway(1_000);
 * const response = await gateway.fetch(url, { signal: AbortSignal.timeout(10_000) });
 */
export function openGateway(connections: number) {
  const client = Deno.createHttpClient({ poolMaxIdlePerHost: connections });
  let busy = 0;
  let most = 0;
  const waiting: Array<() => void> = [];

  /** A slot of the pool, once one is free; rejects if `signal` aborts first. */
  function acquire(signal: AbortSignal | undefined): Promise<void> {
    if (busy < connections) {
      busy++;
      most = Math.max(most, busy);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const turn = () => {
        signal?.removeEventListener("abort", aborted);
        resolve();
      };
      const aborted = () => {
        waiting.splice(waiting.indexOf(turn), 1);
        reject(signal!.reason);
      };
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
    /** `fetch` through the pool: the body is read before the slot is given back; `waitedMs` is the wait for the slot. */
    async fetch(url: string, init: RequestInit & { signal?: AbortSignal }): Promise<{ response: Response; body: string; waitedMs: number }> {
      const asked = performance.now();
      await acquire(init.signal);
      const waitedMs = performance.now() - asked;
      try {
        const response = await fetch(url, { ...init, client });
        return { response, body: await response.text(), waitedMs };
      } finally {
        release();
      }
    },
    /** The most requests that held a connection at once. */
    most: () => most,
    close: () => client.close(),
  };
}

export type Gateway = ReturnType<typeof openGateway>;
