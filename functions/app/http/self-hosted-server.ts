import type { Logger } from "../log.ts";
import { errorMessage } from "../log.ts";

/**
 * How often the server tries to listen again on its port. Deno.serve's accept loop ends at the
 * first accept error (ext/http/http_next.rs, `op_http_serve`: `accept(...).await?`), and running out
 * of descriptors (EMFILE) is one: the listener is closed, and the server's `finished` rejects once
 * the connections it still holds have closed. A bind that succeeds means nothing listens there any
 * more; while the listener lives it fails with AddrInUse at no cost to anyone.
 */
export const RELISTEN_INTERVAL_MS = 2_000;

export interface SelfHostedServer {
  /** The address listened on, as Deno reports it. */
  hostname: string;
  port: number;
  /** Stops accepting, and resolves once every request under way is answered. */
  shutdown(): Promise<void>;
}

export interface SelfHostedOptions {
  /** The address to listen on (`HOST`): loopback keeps the port to this machine. */
  hostname: string;
  port: number;
  handler: (request: Request, remoteAddr: string) => Response | Promise<Response>;
  log: Logger;
}

/**
 * Serves `handler` with Deno.serve, as `npm start` runs the API on a machine of its own, and keeps
 * the process serving through a connection flood that exhausts its descriptors: the lost listener's
 * rejection is caught (uncaught, it ended the process), the connections it held are still served,
 * and a new listener takes the port as soon as a bind succeeds (functions/README.md, "Connection
 * floods"). Bounding connections is the reverse proxy's job (functions/production/).
 *
 * @example
 * const server = await serveSelfHosted({ hostname: "127.0.0.1", port: 8000, handler: (r, ip) => app.fetch(r, { remoteAddr: ip }), log });
 */
export async function serveSelfHosted(options: SelfHostedOptions): Promise<SelfHostedServer> {
  const servers = new Set<Deno.HttpServer<Deno.NetAddr>>();
  /** Listens on `port` (throws AddrInUse while a listener of ours still holds it). */
  const serve = (port: number, onListen: (address: Deno.NetAddr) => void) => {
    const server = Deno.serve(
      { hostname: options.hostname, port, onListen },
      (request, info) => options.handler(request, info.remoteAddr.hostname),
    );
    servers.add(server);
    server.finished.then(
      () => servers.delete(server),
      (error) => {
        servers.delete(server);
        options.log("warn", "listener_lost", { message: errorMessage(error) });
      },
    );
  };

  const { hostname, port } = await new Promise<Deno.NetAddr>((resolve) => serve(options.port, resolve));
  const relisten = setInterval(() => {
    try {
      serve(port, () => options.log("warn", "listener_reopened", { port }));
    } catch {
      // AddrInUse: the listener lives. Anything else (EMFILE still): the next interval tries again.
    }
  }, RELISTEN_INTERVAL_MS);
  return {
    hostname,
    port,
    shutdown: async () => {
      clearInterval(relisten);
      await Promise.all([...servers].map((server) => server.shutdown()));
    },
  };
}
