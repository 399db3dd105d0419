/** How many examples of each kind of unexpected answer the report prints. */
const EXAMPLES_KEPT = 5;

/**
 * Every request the fleet sent: counts per status (`timeout` and `error` for none), the latency of
 * each answer, and the unexpected ones with a few examples of each kind.
 */
export class Tally {
  requests = 0;
  /** Requests sent from `windowStart` on, for the per-kiosk rate. */
  windowRequests = 0;
  windowStart = Number.POSITIVE_INFINITY;
  /** Bytes of the answers to requests sent from `windowStart` on (answerBytes in kiosk.ts). */
  windowAnswerBytes = 0;
  readonly byStatus: Record<string, number> = {};
  unexpected = 0;
  /** Answers served from the last known good (with `Age`) while the database was away. */
  stale = 0;
  readonly examples = new Map<string, string[]>();
  private latencies = new Float64Array(1 << 16);
  private answered = 0;

  /** One request sent at `sentAt`: its status (or `timeout`/`error`), latency and bytes when answered, and what was wrong with it. */
  record(sentAt: number, status: string, latencyMs: number | undefined, problem: string | undefined, bytes = 0) {
    this.requests++;
    if (sentAt >= this.windowStart) {
      this.windowRequests++;
      this.windowAnswerBytes += bytes;
    }
    this.byStatus[status] = (this.byStatus[status] ?? 0) + 1;
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
