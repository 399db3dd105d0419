import type { ScheduleContent } from "./schemas.ts";

/** A payload as served: its version, and the 200 body with the version in front. */
export interface VersionedPayload {
  version: string;
  body: string;
}

/**
 * The 200 body of a stored payload: `{"version":…,"type":…,…}`, compact. The version is the
 * database's (public.schedule_payloads.version): the API never hashes a payload. Parsing and
 * writing the text again costs about as much as the query that fetched it, so `servedSchedules`
 * keeps the result by version.
 *
 * @example
 * const { version, body } = versionPayload(row.version, row.body);
 */
export function versionPayload(version: string, text: string): VersionedPayload {
  const content = JSON.parse(text) as ScheduleContent;
  return { version, body: JSON.stringify({ version, ...content }) };
}
