/** What the simulation reads from the server's own metrics (its admin listener's `/metrics`). */
export interface ServerDurations {
  /** Requests the server timed, from its app's start to its answer (http_server_request_duration_seconds). */
  requests: number;
  /** How many took at most each bucket's bound, in seconds (cumulative, as Prometheus counts them). */
  atMost: Record<string, number>;
  /** The bucket bound (seconds) that holds the 50th and the 99th percentile. */
  p50Within: string;
  p99Within: string;
  /** Requests refused by admission control (cadence_requests_shed_total), by reason. */
  shed: Record<string, number>;
}

/** The value of every sample of `name` in a Prometheus text exposition, with its labels' text (a route template holds braces: `{licenseKey}`). */
function samples(text: string, name: string): Array<{ labels: string; value: number }> {
  const found: Array<{ labels: string; value: number }> = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const match = /^(\w+)(\{.*\})? (\S+)$/.exec(line);
    if (match && match[1] === name) found.push({ labels: match[2] ?? "", value: Number(match[3]) });
  }
  return found;
}

const label = (labels: string, name: string) => new RegExp(`${name}="([^"]*)"`).exec(labels)?.[1];

/** The most the server's event loop ran a timer late since its last scrape, in ms (cadence_event_loop_delay_max_seconds). */
export function loopDelayMs(text: string): number {
  return (samples(text, "cadence_event_loop_delay_max_seconds")[0]?.value ?? 0) * 1000;
}

/**
 * The server's request-duration histogram summed over its series (every route, method and status),
 * and the requests admission control refused: the server's own account of how long requests took,
 * beside the kiosks' (which includes their wait for a gateway connection and the simulator's own
 * event loop).
 */
export function serverDurations(text: string): ServerDurations {
  const atMost: Record<string, number> = {};
  for (const { labels, value } of samples(text, "http_server_request_duration_seconds_bucket")) {
    const le = label(labels, "le")!;
    atMost[le] = (atMost[le] ?? 0) + value;
  }
  const requests = atMost["+Inf"] ?? 0;
  // By bound, not by key order: an object lists "1", "5" and "10" before "0.5".
  const bounds = Object.keys(atMost).sort((a, b) => Number(a.replace("+Inf", "Infinity")) - Number(b.replace("+Inf", "Infinity")));
  const within = (share: number) => bounds.find((le) => atMost[le] >= share * requests) ?? "+Inf";
  const shed: Record<string, number> = {};
  for (const { labels, value } of samples(text, "cadence_requests_shed_total")) shed[label(labels, "reason") ?? ""] = value;
  return { requests, atMost, p50Within: within(0.5), p99Within: within(0.99), shed };
}
