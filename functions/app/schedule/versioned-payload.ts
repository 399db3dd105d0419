import { scheduleVersion } from "./schedule-version.ts";
import type { ScheduleContent } from "./schemas.ts";

/** A payload as served: its content, its version, and the 200 body with the version in front. */
export interface VersionedPayload {
  content: ScheduleContent;
  version: string;
  body: string;
}

/**
 * Kiosks poll the same few payloads over and over. Parsing, hashing and serialising one costs about
 * as much as the query that fetched it, so results are kept by payload text: a poll then costs one
 * query and one map lookup. Equal text always yields an equal result, so nothing goes stale.
 */
export const VERSIONED_PAYLOADS_KEPT = 1024;

/**
 * Returns `versioned(text)`, which turns the database's payload text into a `VersionedPayload`,
 * keeping the last `capacity` results (oldest dropped first).
 *
 * @example
 * const versioned = versionedPayloads();
 * const { version, body } = await versioned(payloadText);
 */
export function versionedPayloads(capacity = VERSIONED_PAYLOADS_KEPT) {
  const kept = new Map<string, Promise<VersionedPayload>>();
  return function versioned(text: string): Promise<VersionedPayload> {
    let result = kept.get(text);
    if (result) return result;
    result = build(text);
    kept.set(text, result);
    if (kept.size > capacity) kept.delete(kept.keys().next().value as string);
    return result;
  };
}

async function build(text: string): Promise<VersionedPayload> {
  const content = JSON.parse(text) as ScheduleContent;
  const version = await scheduleVersion(content);
  return { content, version, body: JSON.stringify({ version, ...content }) };
}
