import type { ScheduleContent } from "./schemas.ts";
import { hexDigest } from "../hex.ts";

/** What a version covers: everything a kiosk sees (`blocks` only repeats `daily`). */
export type VersionedContent = Pick<ScheduleContent, "type" | "daily" | "weekly">;

/**
 * JSON with the keys of every object sorted, so equal content has exactly one spelling whatever
 * order the database or a process produced it in.
 *
 * @example
 * canonicalJson({ b: 1, a: [true, null] }); // '{"a":[true,null],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const object = value as Record<string, unknown>;
    const members = Object.keys(object)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key])}`);
    return `{${members.join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * The schedule's version (and ETag value): SHA-256, in hex, of the canonical JSON of its type,
 * daily and weekly. It depends on content only, so every process and restart agrees on it.
 *
 * @example
 * const version = await scheduleVersion({ type: null, daily: [], weekly: {} });
 */
export async function scheduleVersion(content: VersionedContent): Promise<string> {
  const canonical = canonicalJson({ type: content.type, daily: content.daily, weekly: content.weekly });
  return await hexDigest("SHA-256", canonical);
}
