/// <reference lib="deno.ns" />
/** What one load run is: connections, threads and how long, the same for every scenario and baseline. */
export interface Load {
  threads: number;
  connections: number;
  seconds: number;
}

/** One request shape; wrk adds a distinct X-Forwarded-For to every request (request.lua). */
export interface RequestShape {
  method: "GET" | "POST" | "PUT";
  headers?: Record<string, string>;
  body?: string;
  /** Request i sends the body, and `path`, with `{n}` replaced by i modulo `fleet`, in four digits, and `{i}` by a mark no other request of the bench sends. */
  fleet?: number;
  /** A path of the fleet's (`{n}`, `{i}` filled in per request), in place of the URL's. */
  path?: string;
}

/** A wrk run's outcome. Errors: responses with status >= 400, and socket errors (connect, read, write, timeout). */
export interface WrkResult {
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  statusErrors: number;
  socketErrors: number;
  /** Bytes per response, headers included: shows a 304 carries no body. */
  bytesPerResponse: number;
  /** CPU seconds wrk itself used: on a shared 2-core machine the generator competes with the server. */
  generatorCpuSeconds: number;
}

const script = new URL("request.lua", import.meta.url).pathname;

/** The message printed when the load generator is missing. */
export const WRK_MISSING = "wrk is not installed: the benchmark drives the server with wrk (apt-get install -y wrk)";

/** True when `wrk` is on the PATH. */
export async function wrkInstalled(): Promise<boolean> {
  try {
    await new Deno.Command("wrk", { args: ["--version"], stdout: "null", stderr: "null" }).output();
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/**
 * Drives `url` with wrk for `load.seconds`. `run` (1..255) is the first octet of every
 * X-Forwarded-For, so no address repeats between runs sharing a rate-limit bucket.
 *
 * @example
 * const result = await runWrk("http://127.0.0.1:8000/api/v2/frequencies", { method: "GET" }, load, 1);
 */
export async function runWrk(url: string, shape: RequestShape, load: Load, run: number): Promise<WrkResult> {
  const headers = Object.entries(shape.headers ?? {}).map(([name, value]) => `${name}: ${value}`);
  const args = [
    `-t${load.threads}`, `-c${load.connections}`, `-d${load.seconds}s`, "--latency", "-s", script, url,
    "--", String(run), String(load.threads), shape.method, shape.body ?? "", String(shape.fleet ?? 0), shape.path ?? "", ...headers,
  ];
  // bash's `times` prints the CPU time of its children (wrk) on its last line.
  const command = 'wrk "$@" || exit $?; times';
  const output = await new Deno.Command("bash", { args: ["-c", command, "wrk", ...args], stdout: "piped", stderr: "piped" }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  const line = /^WRK_RESULT (.*)$/m.exec(stdout);
  const times = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(stdout);
  if (!output.success || !line || !times) {
    throw new Error(`wrk failed (${output.code}):\n${stdout}${new TextDecoder().decode(output.stderr)}`);
  }
  const raw = JSON.parse(line[1]) as Record<string, number>;
  return {
    requests: raw.requests,
    requestsPerSecond: raw.requests / (raw.durationUs / 1e6),
    p50Ms: raw.p50Us / 1000,
    p99Ms: raw.p99Us / 1000,
    maxMs: raw.maxUs / 1000,
    statusErrors: raw.status,
    socketErrors: raw.connect + raw.read + raw.write + raw.timeout,
    bytesPerResponse: raw.requests === 0 ? 0 : raw.bytes / raw.requests,
    generatorCpuSeconds: Number(times[1]) * 60 + Number(times[2]) + Number(times[3]) * 60 + Number(times[4]),
  };
}
