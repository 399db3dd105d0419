import { Histogram, type Registry } from "prom-client";
import type { RequestObserver } from "../http/request-timing.ts";

/**
 * OpenTelemetry's advice for `http.server.request.duration` (its semantic conventions, in seconds),
 * so a dashboard built for OpenTelemetry's buckets reads these as they are.
 */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** The methods the interface answers; any other is counted as OpenTelemetry's `_OTHER`, so a client cannot add label values. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "OPTIONS", "DELETE", "PATCH"]);

type Observe = (seconds: number) => void;

/**
 * Every request's duration, by method, route template and status, as a prom-client histogram named
 * as OpenTelemetry's Prometheus exporter names `http.server.request.duration`. The route is the
 * template (`/api/v2/licenses/{licenseKey}/schedule`), never the path, so a key in a path makes no
 * series; `""` when no route answered. Each series' child (`histogram.labels(...)`) is found once
 * and kept by method, route and status, so a request builds no label object (prom-client's observe
 * measured 0.36 µs here, against a catalogue read's 20 µs).
 *
 * @example
 * const observe = requestDurations(registry);
 * observe("GET", "/api/v2/frequencies", 200, 0.0012);
 */
export function requestDurations(registry: Registry): RequestObserver {
  const histogram = new Histogram({
    name: "http_server_request_duration_seconds",
    help: "Duration of HTTP server requests (OpenTelemetry's http.server.request.duration), from the app's start to its answer.",
    labelNames: ["http_request_method", "http_route", "http_response_status_code"],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  /** Method, then route template, then status: looked up without building a key on every request. */
  const children = new Map<string, Map<string, Map<number, Observe>>>();

  function childOf(method: string, route: string, status: number): Observe {
    let byRoute = children.get(method);
    if (byRoute === undefined) children.set(method, (byRoute = new Map()));
    let byStatus = byRoute.get(route);
    if (byStatus === undefined) byRoute.set(route, (byStatus = new Map()));
    let observe = byStatus.get(status);
    if (observe === undefined) {
      observe = histogram.labels(method, route, String(status)).observe;
      byStatus.set(status, observe);
    }
    return observe;
  }

  // Normalised before it keys the map: a client's made-up methods add no series.
  return (method, route, status, seconds) => childOf(METHODS.has(method) ? method : "_OTHER", route, status)(seconds);
}
