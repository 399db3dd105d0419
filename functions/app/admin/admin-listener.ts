import { serveSelfHosted } from "../http/self-hosted-server.ts";
import type { Logger } from "../log.ts";
import type { WorkerMetrics } from "./metrics.ts";
import type { ReadyAnswer, Readiness } from "./readiness.ts";

/** The admin listener's address: this machine only, whatever HOST the API listens on. */
export const ADMIN_HOST = "127.0.0.1";

/**
 * `/ready`'s status for each state. Starting is 503, as PostgREST's `/ready` answers until it is
 * ready. Draining is 404: HAProxy's soft stop (`http-check disable-on-404`), which sends the worker
 * no new request but lets those under way finish; a 503 would mark it down, and the proxy's
 * `on-marked-down shutdown-sessions`, there for a worker whose event loop is stuck, would cut them.
 * Every orchestrator reads either as not ready.
 */
const READY_STATUS: Record<ReadyAnswer["status"], number> = { starting: 503, ready: 200, draining: 404 };

export interface AdminListener {
  port: number;
  close(): Promise<void>;
}

/**
 * The admin listener: `GET /live` (200 whenever the worker's event loop answers: it is the same
 * loop that serves the API), `GET /ready` (200 ready, 503 starting, 404 draining, with the state
 * as JSON: readiness.ts) and `GET /metrics` (Prometheus' text format: metrics.ts), on 127.0.0.1 so
 * that only this machine's proxy and Prometheus reach it; the public proxy forwards to the API's
 * port, where these paths are 404. It keeps listening through a descriptor flood as the API's
 * listener does (http/self-hosted-server.ts), or a flood would read as a dead worker.
 *
 * @example
 * const admin = await openAdminListener({ port: 9000, readiness, metrics, log, database: () => "available" });
 */
export async function openAdminListener(options: {
  port: number;
  readiness: Readiness;
  metrics: WorkerMetrics;
  log: Logger;
  /** What `/ready` says of the database, for the operator: never part of its verdict. */
  database: () => "available" | "unavailable" | "not opened";
}): Promise<AdminListener> {
  const { readiness, metrics } = options;
  const json = (status: number, body: unknown) => Response.json(body, { status, headers: { "cache-control": "no-store" } });
  const server = await serveSelfHosted({
    hostname: ADMIN_HOST,
    port: options.port,
    log: options.log,
    async handler(request) {
      if (request.method !== "GET" && request.method !== "HEAD") {
        return Response.json({ message: "method not allowed" }, { status: 405, headers: { allow: "GET, HEAD" } });
      }
      switch (new URL(request.url).pathname) {
        case "/live":
          return json(200, { status: "live" });
        case "/ready": {
          const answer = readiness.answerCheck();
          return json(READY_STATUS[answer.status], { ...answer, database: options.database() });
        }
        case "/metrics":
          return new Response(await metrics.scrape(), { headers: { "content-type": metrics.contentType, "cache-control": "no-store" } });
        default:
          return json(404, { message: "not found" });
      }
    },
  });
  return { port: server.port, close: () => server.shutdown() };
}
