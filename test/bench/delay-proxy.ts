import { createServer, type Server, type Socket, connect } from "node:net";

/** The delay the proxy adds to each direction by default: 15 ms each way, a 30 ms round trip. */
export const DEFAULT_DELAY_MS = 15;

export interface DelayProxy {
  /** The loopback port it listens on. */
  port: number;
  /** Sets the delay each direction gets from now on (0: none); bytes keep their order across a change. */
  setDelay(ms: number): void;
  stop(): Promise<void>;
}

/**
 * A TCP proxy on a free loopback port to `targetPort`, holding every chunk `delayMs` before
 * passing it on in either direction: a service a distance away (a database a region from the edge
 * function), for counting the round trips a request waits on it.
 *
 * @example
 * const proxy = await startDelayProxy(pooler.port);
 * proxy.setDelay(15);
 */
export async function startDelayProxy(targetPort: number, delayMs = 0): Promise<DelayProxy> {
  let delay = delayMs;
  const sockets = new Set<Socket>();

  /** Writes what `from` reads to `to`, each chunk `delay` later, and never before the one ahead of it. */
  function pipeDelayed(from: Socket, to: Socket) {
    let lastDue = 0;
    from.on("data", (chunk: Buffer) => {
      const due = Math.max(performance.now() + delay, lastDue);
      lastDue = due;
      const wait = due - performance.now();
      if (wait <= 0) to.write(chunk);
      else setTimeout(() => to.write(chunk), wait);
    });
    from.on("end", () => setTimeout(() => to.end(), Math.max(0, lastDue - performance.now())));
  }

  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, "127.0.0.1");
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
      socket.on("close", () => sockets.delete(socket));
    }
    pipeDelayed(client, upstream);
    pipeDelayed(upstream, client);
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port));
  });
  return {
    port,
    setDelay(ms) {
      delay = ms;
    },
    stop() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
