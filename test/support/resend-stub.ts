import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedEmail {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: { from: string; to: string[]; subject: string; text: string; html: string };
}

/**
 * A local stand-in for Resend's HTTP API (`POST /emails`) on 127.0.0.1: it records each request
 * and answers 200 with an id, or with `status` while `failWith` is set, as Resend does on errors.
 * `delayMs` makes every answer slow, so a test can catch deliveries in flight; `onArrival` is told
 * when a request has come in, before that delay; `heldUntil` holds every answer until it resolves.
 */
export async function startResendStub(options: { delayMs?: number; onArrival?: () => void; heldUntil?: Promise<void> } = {}) {
  const received: ReceivedEmail[] = [];
  let failure: { status: number; remaining: number } | undefined;
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", async () => {
      options.onArrival?.();
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      await options.heldUntil;
      res.setHeader("content-type", "application/json");
      if (failure && failure.remaining > 0) {
        failure.remaining -= 1;
        res.statusCode = failure.status;
        res.end(JSON.stringify({ statusCode: failure.status, name: "validation_error", message: "stub refused" }));
        return;
      }
      received.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: JSON.parse(raw) });
      res.end(JSON.stringify({ id: crypto.randomUUID() }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/emails`,
    received,
    failWith(status: number, times = 1) {
      failure = { status, remaining: times };
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Requests still held by `delayMs` would keep close() waiting.
        server.closeAllConnections();
      }),
  };
}
