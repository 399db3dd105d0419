import type { Concerned } from "./staff.ts";

interface Change {
  madeAt: number;
  /** Kiosks that have not yet seen it (or a later version), by key. */
  waiting: Set<string>;
  /** When the last of its kiosks saw it; undefined while some still wait. */
  seenByAllAt?: number;
}

interface Pending {
  change: Change;
  version: string;
}

/**
 * Which schedule changes reached which kiosks, and when. A kiosk has seen a change when it is
 * served that change's version, or the version of a later change to its schedule (which carries
 * the first). Times are the simulation's milliseconds.
 */
export class ChangeLedger {
  private readonly changes: Change[] = [];
  /** Per key: the changes it has not seen yet, oldest first. */
  private readonly pending = new Map<string, Pending[]>();
  /** Per key: the version it was last served. */
  private readonly held = new Map<string, string>();

  /** Records a change made at `madeAt` that serves `concerned` their new versions. */
  made(concerned: Concerned[], madeAt: number) {
    const change: Change = { madeAt, waiting: new Set() };
    this.changes.push(change);
    for (const { key, version } of concerned) {
      // Its answer may have arrived between the commit and this record.
      if (this.held.get(key) === version) continue;
      change.waiting.add(key);
      this.pending.set(key, [...(this.pending.get(key) ?? []), { change, version }]);
    }
    if (change.waiting.size === 0) change.seenByAllAt = madeAt;
  }

  /** Kiosk `key` was served `version` at `at`. */
  served(key: string, version: string, at: number) {
    this.held.set(key, version);
    const pending = this.pending.get(key);
    if (!pending) return;
    const index = pending.findIndex((entry) => entry.version === version);
    if (index < 0) return;
    for (const { change } of pending.splice(0, index + 1)) {
      change.waiting.delete(key);
      if (change.waiting.size === 0) change.seenByAllAt = at;
    }
    if (pending.length === 0) this.pending.delete(key);
  }

  /** How many changes were made, and how many every kiosk they concern saw within `withinMs`. */
  count(withinMs: number): { made: number; seenInTime: number } {
    const seenInTime = this.changes.filter((c) => c.seenByAllAt !== undefined && c.seenByAllAt - c.madeAt <= withinMs).length;
    return { made: this.changes.length, seenInTime };
  }

  /** Keys still waiting for a change, for the report of what went wrong. */
  waiting(): string[] {
    return [...this.pending.keys()];
  }
}
