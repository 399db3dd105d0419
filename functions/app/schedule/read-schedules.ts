import { batchWhileBusy } from "../batch-while-busy.ts";
import type { Deps } from "../deps.ts";
import { type Known, lastKnownGood } from "../http/last-known-good.ts";
import type { PairingOutcome } from "../pairing.ts";
import { servedBound, servedSchedules } from "./served-schedules.ts";
import { readLegacySchedulesIfChanged, readSchedulesIfChanged } from "./store.ts";
import type { VersionedPayload } from "./versioned-payload.ts";

/**
 * The schedule reads a kiosk's poll makes (sections 4.4 and 4.5), for one process: each asks the
 * database with the version of the payload last served for the key, so an unchanged schedule
 * moves no payload (`servedSchedules`); reads asked for while one runs go together in the next
 * statement (`batchWhileBusy`); and while the database is unavailable, the answer last served for
 * the key (or key and e-mail) is given with its age, each cache at most 10,000 entries and 16 MiB
 * of payload text (`servedBound`).
 *
 * @example
 * const reads = scheduleReads(deps);
 * const { value: payload, age } = await reads.ofKey("DEMO-0000-0000-0001");
 */
export function scheduleReads(deps: Pick<Deps, "db" | "now">) {
  const served = servedSchedules();
  const lastServed = lastKnownGood<{ payload: VersionedPayload | null }>(servedBound(deps.now));
  const lastLegacy = lastKnownGood<{ outcome: PairingOutcome | undefined; payload: VersionedPayload | null }>(servedBound(deps.now));
  const readSchedule = batchWhileBusy((reads: Parameters<typeof readSchedulesIfChanged>[1], options) =>
    readSchedulesIfChanged(deps.db, reads, options)
  );
  const readLegacy = batchWhileBusy((reads: Parameters<typeof readLegacySchedulesIfChanged>[1], options) =>
    readLegacySchedulesIfChanged(deps.db, reads, options)
  );
  return {
    /** The payload served for `key`; null for a key that is unknown or has no schedule to serve. */
    async ofKey(key: string): Promise<Known<VersionedPayload | null>> {
      const { value, age } = await lastServed.read(
        key,
        () => served.read(key, (version) => readSchedule({ key, version })),
        (answer) => answer.payload !== null,
      );
      return { value: value.payload, age };
    },
    /** Whether `key` belongs to `email`'s account (the pairing outcome), and the key's payload. */
    async legacy(key: string, email: string): Promise<Known<{ outcome: PairingOutcome | undefined; payload: VersionedPayload | null }>> {
      return await lastLegacy.read(
        `${key}\n${email}`,
        async () => {
          const { row, payload } = await served.read(key, (version) => readLegacy({ key, email, version }));
          return { outcome: row?.outcome, payload };
        },
        (answer) => answer.outcome === "paired" && answer.payload !== null,
      );
    },
  };
}
