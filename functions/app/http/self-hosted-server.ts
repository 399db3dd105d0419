import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect, Server as NetServer } from "node:net";
import { Readable } from "node:stream";
import type { Logger } from "../log.ts";
import { errorMessage } from "../log.ts";

/**
 * A connection must deliver its whole header block within this many milliseconds of opening (or,
 * kept alive, of its next request's first byte), or it is answered 408 and closed: a connection that
 * sends nothing, or trickles its headers (slowloris), holds a descriptor for no longer than this.
 */
export const HEADERS_TIMEOUT_MS = 10_000;
/**
 * The whole request, body included, must arrive within this; the app's own body deadline
 * (http/body.ts, 10 s after the headers) answers first, so this is the backstop.
 */
export const REQUEST_TIMEOUT_MS = 30_000;
/**
 * An idle kept-alive connection is closed after this: a kiosk polls every 30 s or more, so a longer
 * wait saves it nothing and holds a descriptor. A proxy that keeps upstream connections open must
 * close them sooner (README, Operating).
 */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/**
 * The most a request line and headers may weigh: 64 KiB, as a body may. node's default of 16 KiB
 * answered 431 to long query strings that Deno.serve passed on and the app answers itself (400/404).
 */
export const MAX_HEADER_BYTES = 64 * 1024;
/** How often the two timeouts above are checked: node's default of 30 s would add up to 30 s to each. */
const CHECK_INTERVAL_MS = 1_000;
/**
 * How often the server checks that it still accepts connections, and how long one check waits. A
 * burst of connections can still run the process out of descriptors before those past the cap are
 * closed (Deno accepts a burst before JavaScript closes any of them: 1,500 at once did it at
 * ulimit -n 256 with a cap of 128), and Deno's node:http then stops accepting for good, with no
 * error event. A check that sees no accept within the wait opens a new listener on the same port.
 */
export const ACCEPT_CHECK_INTERVAL_MS = 2_000;
const ACCEPT_CHECK_WAIT_MS = 3_000;

export interface SelfHostedServer {
  port: number;
  /** Stops accepting, closes idle connections, and resolves once every request under way is answered. */
  shutdown(): Promise<void>;
}

export interface SelfHostedOptions {
  port: number;
  /** Connections past this are closed as soon as they are accepted (http/file-descriptors.ts). */
  maxConnections: number;
  handler: (request: Request, remoteAddr: string) => Response | Promise<Response>;
  log: Logger;
}

/**
 * Serves `handler` with node:http, as `npm start` runs the API on a machine of its own. Deno.serve,
 * which the edge function keeps, has no bound on a connection that sends nothing and no cap on
 * connections: a flood of idle ones ran the process out of descriptors and its accept loop threw
 * EMFILE, which ended the process. node:http closes a connection whose headers are late and refuses
 * connections past `maxConnections` (functions/README.md, "Connection floods").
 *
 * @example
 * const server = await serveSelfHosted({ port: 8000, maxConnections: 900, handler: (r, ip) => app.fetch(r, { remoteAddr: ip }), log });
 */
export async function serveSelfHosted(options: SelfHostedOptions): Promise<SelfHostedServer> {
  let accepted = 0;
  const servers = new Set<Server>();
  const open = () => {
    const server = createServer(
      {
        headersTimeout: HEADERS_TIMEOUT_MS,
        requestTimeout: REQUEST_TIMEOUT_MS,
        keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
        connectionsCheckingInterval: CHECK_INTERVAL_MS,
        maxHeaderSize: MAX_HEADER_BYTES,
      },
      (incoming, outgoing) => void respond(incoming, outgoing, options),
    );
    server.maxConnections = options.maxConnections;
    server.on("connection", () => accepted++);
    // An error after listening is the server's own trouble, never a reason to end the process.
    server.on("error", (error) => options.log("error", "server_error", { message: errorMessage(error) }));
    servers.add(server);
    server.once("close", () => servers.delete(server));
    return server;
  };

  let current = open();
  // 0.0.0.0, as Deno.serve listens by default: node would take IPv6's :: and see IPv4 peers as ::ffff:a.b.c.d.
  const port = await listen(current, options.port);

  const reopen = async () => {
    // net's close, not http's: the old server stops accepting, but keeps serving and timing out
    // the connections it holds (http's close would close the idle ones, kept-alive clients' too).
    NetServer.prototype.close.call(current, () => {});
    current = open();
    try {
      await listen(current, port);
      options.log("warn", "listener_reopened", { port, reason: "no connection accepted within the check" });
    } catch (error) {
      // Out of descriptors still: the next check finds the port refusing and tries again.
      options.log("error", "listener_reopen_failed", { port, message: errorMessage(error) });
    }
  };
  let checking = false;
  const watchdog = setInterval(() => {
    if (checking) return;
    checking = true;
    void acceptsConnections(port, () => accepted).then(async (accepts) => {
      if (!accepts) await reopen();
      checking = false;
    });
  }, ACCEPT_CHECK_INTERVAL_MS);

  return {
    port,
    shutdown: async () => {
      clearInterval(watchdog);
      await Promise.all([...servers].map((server) => new Promise<void>((done) => server.close(() => done()))));
    },
  };
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "0.0.0.0", () => {
      server.off("error", reject);
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : port);
    });
  });
}

/**
 * Whether the server still accepts: a connection to itself is accepted (or accepted and closed at
 * the cap), or some other connection was accepted meanwhile. Refused means nothing listens; a
 * connect that fails otherwise (out of descriptors here) says nothing, so it counts as accepting.
 */
function acceptsConnections(port: number, acceptedSoFar: () => number): Promise<boolean> {
  const before = acceptedSoFar();
  return new Promise((resolve) => {
    const probe = connect(port, "127.0.0.1");
    const finish = (accepts: boolean) => {
      clearInterval(poll);
      clearTimeout(timer);
      probe.destroy();
      resolve(accepts);
    };
    const poll = setInterval(() => acceptedSoFar() > before && finish(true), 50);
    const timer = setTimeout(() => finish(acceptedSoFar() > before), ACCEPT_CHECK_WAIT_MS);
    probe.on("error", (error: NodeJS.ErrnoException) => finish(error.code !== "ECONNREFUSED"));
    probe.on("close", () => finish(true));
  });
}

async function respond(incoming: IncomingMessage, outgoing: ServerResponse, options: SelfHostedOptions) {
  let request: Request;
  try {
    request = toRequest(incoming);
  } catch {
    // A target or header that the parser let through but a URL or Headers refuses.
    return send(incoming, outgoing, new Response("Bad Request", { status: 400 }), options);
  }
  let response: Response;
  try {
    response = await options.handler(request, incoming.socket.remoteAddress ?? "");
  } catch (error) {
    // As Deno.serve does for a handler that throws; the app's onError answers everything it can.
    options.log("error", "request_failed", { message: errorMessage(error) });
    response = new Response("Internal Server Error", { status: 500 });
  }
  await send(incoming, outgoing, response, options);
}

async function send(incoming: IncomingMessage, outgoing: ServerResponse, response: Response, options: SelfHostedOptions) {
  try {
    // Every answer of this app is a small JSON document: read whole, sent with its length.
    const body = response.body && incoming.method !== "HEAD" ? new Uint8Array(await response.arrayBuffer()) : undefined;
    const headers: string[] = [];
    for (const [name, value] of response.headers) headers.push(name, value);
    if (body && !response.headers.has("content-length")) headers.push("content-length", String(body.byteLength));
    outgoing.writeHead(response.status, headers);
    outgoing.end(body);
  } catch (error) {
    // The client left, or the answer could not be written: nothing is left to tell it.
    options.log("warn", "response_not_sent", { message: errorMessage(error) });
    outgoing.destroy();
  }
}

/** The fetch Request Deno.serve would have built: same URL from the Host header, same headers, the body streamed. */
function toRequest(incoming: IncomingMessage): Request {
  const path = incoming.url ?? "/";
  const url = path.startsWith("/") ? `http://${hostOf(incoming)}${path}` : path;
  const headers = new Headers();
  for (let i = 0; i < incoming.rawHeaders.length; i += 2) headers.append(incoming.rawHeaders[i], incoming.rawHeaders[i + 1]);
  const method = incoming.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(url, {
    method,
    headers,
    body: hasBody ? (Readable.toWeb(incoming) as ReadableStream<Uint8Array>) : null,
    // @ts-expect-error: fetch's RequestInit lacks `duplex`, which a streamed body requires.
    duplex: "half",
  });
}

/** The Host header when it can name a URL's host, else localhost: routing uses the path alone. */
function hostOf(incoming: IncomingMessage): string {
  const host = incoming.headers.host;
  if (!host) return "localhost";
  try {
    return new URL(`http://${host}`).host;
  } catch {
    return "localhost";
  }
}
