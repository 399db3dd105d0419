import type { Concerned } from "./staff.ts";

interface Change {
  madeAt: number;
  /** Kiosks that have not yet seen it (or a later version), by key. */
  waiting: Set<string>;
  /** Whether a kiosk saw it after its deadline. */
  late: boolean;
}

interface Pending {
  change: Change;
  version: string;
  /** Time added to this kiosk's deadline by answers the outage deferred (deferred()). */
  allowanceMs: number;
}

/**
 * Which schedule changes reached which kiosks, and whether in time: within `withinMs` of being
 * made, plus what the database's outages deferred for that kiosk. A kiosk has seen a change when
 * it is served that change's version, or the version of a later change to its schedule (which
 * carries the first). Times are the simulation's milliseconds.
 */
export class ChangeLedger {
  private readonly changes: Change[] = [];
  /** Per key: the changes it has not seen yet, oldest first. */
  private readonly pending = new Map<string, Pending[]>();
  /** Per key: the version it was last served. */
  private readonly held = new Map<string, string>();

  constructor(private readonly withinMs: number) {}

  /** Records a change made at `madeAt` that serves `concerned` their new versions. */
  made(concerned: Concerned[], madeAt: number) {
    const change: Change = { madeAt, waiting: new Set(), late: false };
    this.changes.push(change);
    for (const { key, version } of concerned) {
      // Its answer may have arrived between the commit and this record.
      if (this.held.get(key) === version) continue;
      change.waiting.add(key);
      this.pending.set(key, [...(this.pending.get(key) ?? []), { change, version, allowanceMs: 0 }]);
    }
  }

  /** Kiosk `key` was served `version` (fresh) at `at`. */
  served(key: string, version: string, at: number) {
    this.held.set(key, version);
    const pending = this.pending.get(key);
    if (!pending) return;
    const index = pending.findIndex((entry) => entry.version === version);
    if (index < 0) return;
    for (const { change, allowanceMs } of pending.splice(0, index + 1)) {
      change.waiting.delete(key);
      if (at - change.madeAt > this.withinMs + allowanceMs) change.late = true;
    }
    if (pending.length === 0) this.pending.delete(key);
  }

  /**
   * Kiosk `key`'s poll could not reach the database (answered from the last known good, with
   * `Age`, or 503): what it waits before the next one (`ms`) does not count against its deadlines.
   */
  deferred(key: string, ms: number) {
    for (const entry of this.pending.get(key) ?? []) entry.allowanceMs += ms;
  }

  /** How many changes were made, and how many every kiosk they concern saw in time. */
  count(): { made: number; seenInTime: number } {
    return { made: this.changes.length, seenInTime: this.changes.filter((c) => c.waiting.size === 0 && !c.late).length };
  }

  /** Keys still waiting for a change, for the report of what went wrong. */
  waiting(): string[] {
    return [...this.pending.keys()];
  }
}
