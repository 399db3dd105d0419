/** How many examples of each kind of unexpected answer the report prints. */
const EXAMPLES_KEPT = 5;

/** A minute of the run, counted from its start. */
const MINUTE_MS = 60_000;

/** An answer slower than this breaks issue 59's bound: every request answered within 2 s. */
export const ANSWER_BOUND_MS = 2_000;

/** Durations in ms, kept for their percentiles. */
export class Samples {
  private values = new Float64Array(1 << 16);
  count = 0;

  add(ms: number) {
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.count++] = ms;
  }

  /** p50 and p99 (nearest rank), the largest, and how many are over ANSWER_BOUND_MS; in ms rounded to 0.01. */
  summary(): { p50: number; p99: number; max: number; overBound: number } {
    const sorted = this.values.slice(0, this.count).sort();
    const at = (share: number) => sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)];
    const round = (ms: number) => Math.round(ms * 100) / 100;
    let overBound = 0;
    for (const ms of sorted) if (ms > ANSWER_BOUND_MS) overBound++;
    return { p50: round(at(0.5)), p99: round(at(0.99)), max: round(sorted.length === 0 ? 0 : sorted[sorted.length - 1]), overBound };
  }
}

/**
 * Every request the fleet sent: counts per status (`timeout` and `error` for none), overall, per
 * minute of the run it was sent in and per route; the latency of each answer, and the unexpected
 * ones with a few examples of each kind.
 */
export class Tally {
  requests = 0;
  /** Requests sent from `windowStart` on, for the per-kiosk rate. */
  windowRequests = 0;
  windowStart = Number.POSITIVE_INFINITY;
  /** Bytes of the answers to requests sent from `windowStart` on (answerBytes in kiosk.ts). */
  windowAnswerBytes = 0;
  readonly byStatus: Record<string, number> = {};
  /** `byMinute[m]`: the counts per status of the requests sent in minute m of the run (from 0). */
  readonly byMinute: Array<Record<string, number>> = [];
  /** The counts per status of each route's requests (`license`, `system-name`, `schedule`, `legacy`). */
  readonly byRoute: Record<string, Record<string, number>> = {};
  unexpected = 0;
  /** Answers served from the last known good (with `Age`) while the database was away. */
  stale = 0;
  readonly examples = new Map<string, string[]>();
  /** Each answer's latency as the kiosk saw it, from its send to the answer's last byte. */
  readonly latencies = new Samples();
  /** Of that, the wait for one of the gateway's connections (gateway.ts): the simulation's queue, not the server's. */
  readonly gatewayWaits = new Samples();
  /** And the rest: from a gateway connection to the answer's last byte. */
  readonly onConnection = new Samples();

  /** One request of `route` sent at `sentAt`: its status (or `timeout`/`error`), latency and bytes when answered, and what was wrong with it. */
  record(route: string, sentAt: number, status: string, latencyMs: number | undefined, problem: string | undefined, bytes = 0, gatewayWaitMs?: number) {
    this.requests++;
    const minute = Math.max(0, Math.floor(sentAt / MINUTE_MS));
    while (this.byMinute.length <= minute) this.byMinute.push({});
    count(this.byMinute[minute], status);
    count((this.byRoute[route] ??= {}), status);
    if (sentAt >= this.windowStart) {
      this.windowRequests++;
      this.windowAnswerBytes += bytes;
    }
    count(this.byStatus, status);
    if (latencyMs !== undefined) {
      this.latencies.add(latencyMs);
      if (gatewayWaitMs !== undefined) {
        this.gatewayWaits.add(gatewayWaitMs);
        this.onConnection.add(latencyMs - gatewayWaitMs);
      }
    }
    if (problem !== undefined) this.unexpectedly(problem);
  }

  private unexpectedly(problem: string) {
    this.unexpected++;
    const kind = problem.replace(/\d+/g, "N");
    const list = this.examples.get(kind) ?? [];
    if (list.length < EXAMPLES_KEPT) this.examples.set(kind, [...list, problem]);
  }

  /** p50 and p99 of the answers' latencies (nearest rank), in ms rounded to 0.01. */
  latencyMs(): { p50: number; p99: number } {
    const { p50, p99 } = this.latencies.summary();
    return { p50, p99 };
  }
}

function count(counts: Record<string, number>, status: string) {
  counts[status] = (counts[status] ?? 0) + 1;
}
