import type { Logger } from "../log.ts";
import { errorMessage } from "../log.ts";
import { BODY_DEADLINE_MS } from "./body.ts";

/**
 * How often the server tries to listen again on its port. Deno.serve's accept loop ends at the
 * first accept error (ext/http/http_next.rs, `op_http_serve`: `accept(...).await?`), and running out
 * of descriptors (EMFILE) is one: the listener is closed, and the server's `finished` rejects once
 * the connections it still holds have closed. A bind that succeeds means nothing listens there any
 * more; while the listener lives it fails with AddrInUse at no cost to anyone.
 */
export const RELISTEN_INTERVAL_MS = 2_000;

/**
 * The longest a shutdown waits for the requests under way before it stops accepting: a request
 * body arrives within `BODY_DEADLINE_MS`, and one second more covers the answer to the last.
 */
export const QUIET_WITHIN_MS = BODY_DEADLINE_MS + 1_000;

export interface SelfHostedServer {
  /** The address listened on, as Deno reports it. */
  hostname: string;
  port: number;
  /**
   * Once no request is under way (at most `QUIET_WITHIN_MS`), stops accepting, and resolves once
   * every request still under way is answered. Deno's own shutdown cuts a request whose body is
   * still arriving (its body reads fail with BadResource: the client gets a 400 for a body it was
   * sending), so it is asked for only once none is.
   */
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
  let underWay = 0;
  let quiet: (() => void) | undefined;
  async function handle(request: Request, remoteAddr: string) {
    underWay += 1;
    try {
      return await options.handler(request, remoteAddr);
    } finally {
      underWay -= 1;
      if (underWay === 0) quiet?.();
    }
  }
  /** Listens on `port` (throws AddrInUse while a listener of ours still holds it). */
  const serve = (port: number, onListen: (address: Deno.NetAddr) => void) => {
    const server = Deno.serve(
      { hostname: options.hostname, port, onListen },
      (request, info) => handle(request, info.remoteAddr.hostname),
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
      if (underWay > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await new Promise<void>((resolve) => {
          quiet = resolve;
          timer = setTimeout(resolve, QUIET_WITHIN_MS);
        });
        clearTimeout(timer);
      }
      await Promise.all([...servers].map((server) => server.shutdown()));
    },
  };
}
