import { createHash } from "node:crypto";
import type { ScheduleContent } from "../../functions/app/schedule/schemas.ts";

/** JSON with the keys of every object sorted: the canonical spelling the version hashes. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const object = value as Record<string, unknown>;
    return `{${Object.keys(object).sort().map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * The version a schedule's content must have, computed here independently of the database that owns
 * it (cadence.schedule_version): SHA-256, in hex, of the canonical JSON of type, daily and weekly. It
 * is the definition the API computed itself before the database became the one owner, so a test
 * against it also shows that no kiosk's ETag moved.
 *
 * @example
 * expect(body.version).toBe(expectedVersion(DEMO_DAILY));
 */
export function expectedVersion(content: Pick<ScheduleContent, "type" | "daily" | "weekly">): string {
  return createHash("sha256").update(canonicalJson({ type: content.type, daily: content.daily, weekly: content.weekly })).digest("hex");
}
