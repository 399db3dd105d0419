import { scheduleVersion } from "./schedule-version.ts";
import type { ScheduleContent } from "./schemas.ts";

/** A payload as served: its version, and the 200 body with the version in front. */
export interface VersionedPayload {
  version: string;
  body: string;
}

/**
 * Turns the database's payload text into a `VersionedPayload`. It costs about as much as the query
 * that fetched the text, so `servedSchedules` keeps the results by fingerprint.
 *
 * @example
 * const { version, body } = await versionPayload(payloadText);
 */
export async function versionPayload(text: string): Promise<VersionedPayload> {
  const content = JSON.parse(text) as ScheduleContent;
  const version = await scheduleVersion(content);
  return { version, body: JSON.stringify({ version, ...content }) };
}
