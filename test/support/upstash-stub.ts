import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Requester } from "@upstash/redis";

/** One HTTP request as the stub received it. */
export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  encoding: string | undefined;
  body: unknown;
}

export interface UpstashStub {
  url: string;
  token: string;
  /** Every request so far, in arrival order. */
  requests: RecordedRequest[];
  stop(): Promise<void>;
}

type Reply = { result?: unknown; error?: string };

/**
 * A local stand-in for Upstash's REST API (https://upstash.com/docs/redis/features/restapi), the
 * boundary of a system outside ours: `POST /` with one command as a JSON array answers
 * `{result}` (200) or `{error}` (400); `POST /pipeline` with an array of commands answers an array
 * of those; a wrong `Authorization: Bearer` token gets 401; with `Upstash-Encoding: base64` every
 * string in a result except "OK" is base64. Commands run on `backend`, a real Redis behind
 * the plain-Redis requester (`openPlainRedis`), as Upstash runs them on its own Redis. `delayMs` holds each answer back that
 * long, as the network to Upstash would.
 *
 * @example
 * const stub = await startUpstashStub((await openPlainRedis(url, options)).requester);
 * const redis = new Redis({ url: stub.url, token: stub.token });
 */
export async function startUpstashStub(
  backend: Requester,
  token = "stub-token",
  options: { delayMs?: number } = {},
): Promise<UpstashStub> {
  const requests: RecordedRequest[] = [];
  const run = (command: unknown): Promise<Reply> => backend.request({ body: command });

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const recorded: RecordedRequest = {
      method: request.method ?? "",
      path: request.url ?? "",
      authorization: request.headers.authorization,
      contentType: request.headers["content-type"],
      encoding: request.headers["upstash-encoding"] as string | undefined,
      body: text ? JSON.parse(text) : undefined,
    };
    requests.push(recorded);
    // A round trip to a real Upstash region takes milliseconds, not the microseconds of loopback.
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (recorded.authorization !== `Bearer ${token}`) return send(401, { error: "Unauthorized" });
    if (recorded.method !== "POST") return send(405, { error: "Method Not Allowed" });
    const encode = (reply: Reply): Reply =>
      recorded.encoding === "base64" && "result" in reply ? { result: base64Strings(reply.result) } : reply;
    if (recorded.path === "/") {
      const reply = await run(recorded.body);
      return send(reply.error === undefined ? 200 : 400, encode(reply));
    }
    if (recorded.path === "/pipeline") {
      // All at once, as Upstash runs a pipeline: Redis gets them in one write, runs them in order
      // (one connection keeps the order), and answers them in one read. One command after another
      // was a round trip each through this process's event loop, half a second for the 50 checks of
      // a burst on a loaded machine, past the limiter's bound.
      const replies = await Promise.all((recorded.body as unknown[]).map(async (command) => encode(await run(command))));
      return send(200, replies);
    }
    send(404, { error: `unknown path ${recorded.path}` });
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: String(error) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function base64Strings(value: unknown): unknown {
  if (typeof value === "string") return value === "OK" ? value : Buffer.from(value, "utf8").toString("base64");
  if (Array.isArray(value)) return value.map(base64Strings);
  return value;
}
