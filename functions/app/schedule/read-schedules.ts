import type { Deps } from "../deps.ts";
import type { Known } from "../read-path/last-known-good.ts";
import type { ReadPath } from "../read-path/read-path.ts";
import type { PairingOutcome } from "../pairing.ts";
import { servedBound, servedSchedules } from "./served-schedules.ts";
import { readLegacySchedulesIfChanged, readSchedulesIfChanged } from "./store.ts";
import type { VersionedPayload } from "./versioned-payload.ts";

/**
 * The schedule reads a kiosk's poll makes (sections 4.4 and 4.5), for one process, each a kiosk
 * read of the read path (batched while a statement runs; its last answer served while the database
 * is unavailable, at most 10,000 entries and 16 MiB of payload text: `servedBound`). What is the
 * schedule's own sits between the two: each read asks the database with the version of the payload
 * last served for the key, so an unchanged schedule moves no payload (`servedSchedules`).
 *
 * @example
 * const reads = scheduleReads(deps, readPath(deps));
 * const { value: payload, age } = await reads.ofKey("DEMO-0000-0000-0001");
 */
export function scheduleReads(deps: Pick<Deps, "db">, readPath: ReadPath) {
  const served = servedSchedules();
  const ofKey = readPath.byKey({
    batch: (reads: Parameters<typeof readSchedulesIfChanged>[1], options) => readSchedulesIfChanged(deps.db, reads, options),
    identity: ({ key, version }) => `${key}\n${version ?? ""}`,
    lastKnownGood: { ...servedBound, keep: (answer: { payload: VersionedPayload | null }) => answer.payload !== null },
  });
  const legacy = readPath.byKey({
    batch: (reads: Parameters<typeof readLegacySchedulesIfChanged>[1], options) => readLegacySchedulesIfChanged(deps.db, reads, options),
    identity: ({ key, email, version }) => `${key}\n${email}\n${version ?? ""}`,
    lastKnownGood: {
      ...servedBound,
      keep: (answer: { outcome: PairingOutcome | undefined; payload: VersionedPayload | null }) => answer.outcome === "paired" && answer.payload !== null,
    },
  });
  return {
    /** The payload served for `key`; null for a key that is unknown or has no schedule to serve. */
    async ofKey(key: string): Promise<Known<VersionedPayload | null>> {
      const { value, age } = await ofKey(key, async (read) => {
        const { payload } = await served.read(key, (version) => read({ key, version }));
        return { payload };
      });
      return { value: value.payload, age };
    },
    /** Whether `key` belongs to `email`'s account (the pairing outcome), and the key's payload. */
    legacy(key: string, email: string): Promise<Known<{ outcome: PairingOutcome | undefined; payload: VersionedPayload | null }>> {
      return legacy(`${key}\n${email}`, async (read) => {
        const { row, payload } = await served.read(key, (version) => read({ key, email, version }));
        return { outcome: row?.outcome, payload };
      });
    },
  };
}
