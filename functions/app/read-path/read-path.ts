import type { Known } from "./last-known-good.ts";
import { type KioskRead, kioskRead, type KioskReadOptions } from "./kiosk-read.ts";
import { ttlCache } from "./ttl-cache.ts";

/** What the read path takes from the app: its clock, and how long a catalogue payload is kept (CATALOGUE_TTL_MS). */
export interface ReadPathPorts {
  now: () => number;
  catalogueTtlMs: number;
}

/** The kiosk read layer of one app, which each feature composes with what is its own. */
export interface ReadPath {
  /** A kiosk read by key (`kioskRead`): batched while a statement runs, its last known good answer kept on the app's clock. */
  byKey<Ask, Row, Answer = Row>(options: KioskReadOptions<Ask, Row, Answer>): KioskRead<Ask, Row, Answer>;
  /** A catalogue payload kept in memory for CATALOGUE_TTL_MS (`ttlCache`), the last one served while the database is unavailable. */
  catalogue<T>(load: () => Promise<T>): () => Promise<Known<T>>;
}

/**
 * The kiosk read layer, wired once per app (`createApp`) and handed to every feature that serves a
 * kiosk read: the clock and the catalogue's lifetime are given here, never by a feature, so every
 * read ages its answers and expires its caches alike.
 *
 * @example
 * const reads = readPath(deps);
 * const categories = reads.catalogue(() => readCatalogue(deps.db, "categories"));
 */
export function readPath(ports: ReadPathPorts): ReadPath {
  return {
    byKey: (options) => kioskRead(options, ports.now),
    catalogue: (load) => ttlCache(load, ports.catalogueTtlMs, ports.now),
  };
}
