/** How many examples of each kind of unexpected answer the report prints. */
const EXAMPLES_KEPT = 5;

/** A minute of the run, counted from its start. */
const MINUTE_MS = 60_000;

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
  private latencies = new Float64Array(1 << 16);
  private answered = 0;

  /** One request of `route` sent at `sentAt`: its status (or `timeout`/`error`), latency and bytes when answered, and what was wrong with it. */
  record(route: string, sentAt: number, status: string, latencyMs: number | undefined, problem: string | undefined, bytes = 0) {
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
      if (this.answered === this.latencies.length) {
        const grown = new Float64Array(this.latencies.length * 2);
        grown.set(this.latencies);
        this.latencies = grown;
      }
      this.latencies[this.answered++] = latencyMs;
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
    const sorted = this.latencies.slice(0, this.answered).sort();
    const at = (share: number) => sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)];
    const round = (ms: number) => Math.round(ms * 100) / 100;
    return { p50: round(at(0.5)), p99: round(at(0.99)) };
  }
}

function count(counts: Record<string, number>, status: string) {
  counts[status] = (counts[status] ?? 0) + 1;
}
