import type { z } from "zod";
import { ErrorMessage } from "../../functions/app/http/error-message.ts";
import { LicenseResponse, SystemNameResponse } from "../../functions/app/license/schemas.ts";
import { SchedulePayload, ScheduleResponse, WEEKDAYS } from "../../functions/app/schedule/schemas.ts";

/** The four requests a kiosk sends. */
export type Route = "license" | "system-name" | "schedule" | "legacy";

/** An answer as the kiosk read it. */
export interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

/** What a kiosk asked: its key and e-mail, and for a conditional poll the ETag it offered. */
export interface Asked {
  route: Route;
  key: string;
  email: string;
  systemName?: string;
  ifNoneMatch?: string;
}

/**
 * What an answer means to the kiosk: `retryAfter` (seconds) for a 429 or 503 it must wait out,
 * `version` for a schedule it was served, `problem` when the answer breaks the contract (the OpenAPI document)
 * or is not one a valid kiosk can get: a 500, a 5xx other than 503 with Retry-After, a 404 for
 * its own key, a body of the wrong shape.
 */
export interface Reading {
  problem?: string;
  retryAfter?: number;
  version?: string;
}

function parse<T>(schema: z.ZodType<T>, body: string): { value?: T; problem?: string } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { problem: "body is not JSON" };
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? { value: parsed.data } : { problem: `body breaks the schema: ${parsed.error.issues[0]?.message}` };
}

/** SchedulePayload (the OpenAPI document's schema): the rules between fields the schema alone does not hold. */
function payloadProblem(payload: Partial<SchedulePayload> & { blocks: SchedulePayload["blocks"] }): string | undefined {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  if (payload.type === "daily" && !same(payload.daily, payload.blocks)) return "daily schedule: daily and blocks differ";
  if (payload.type === "weekly") {
    if (payload.blocks.length > 0) return "weekly schedule: blocks is not empty";
    if (!same(Object.keys(payload.weekly ?? {}).sort(), [...WEEKDAYS].sort())) return "weekly schedule: weekly lacks a weekday";
  }
  if (payload.type === null && (payload.blocks.length > 0 || (payload.daily ?? []).length > 0)) return "no schedule, yet blocks";
  return undefined;
}

/** A strong or weak ETag's value: `"v"` or `W/"v"` gives `v`. */
const etagValue = (etag: string | null) => etag?.replace(/^W\//, "").replace(/^"(.*)"$/, "$1");

/** Reads `answer` to the kiosk request `asked`, as interface-v2 defines it. */
export function readAnswer(asked: Asked, answer: Answer): Reading {
  const { status, headers, body } = answer;
  if (status === 429 || status === 503) {
    const retryAfter = headers.get("retry-after");
    if (retryAfter === null || !/^\d+$/.test(retryAfter)) return { problem: `${status} without an integer Retry-After` };
    const { problem } = parse(ErrorMessage, body);
    return { problem: problem && `${status}: ${problem}`, retryAfter: Number(retryAfter) };
  }
  if (status === 304 && asked.route === "schedule" && asked.ifNoneMatch) {
    if (body !== "") return { problem: "304 with a body" };
    if (etagValue(headers.get("etag")) !== etagValue(asked.ifNoneMatch)) return { problem: "304 whose ETag is not the one offered" };
    return { version: etagValue(asked.ifNoneMatch) };
  }
  if (status !== 200) return { problem: `status ${status} for a valid kiosk's ${asked.route} request` };
  switch (asked.route) {
    case "license": {
      const { value, problem } = parse(LicenseResponse, body);
      if (problem) return { problem };
      if (value!.key !== asked.key || value!.email_address !== asked.email || value!.systemNameStatus !== "unchanged") {
        return { problem: `license answer ${JSON.stringify(value)} is not the kiosk's` };
      }
      return {};
    }
    case "system-name": {
      const { value, problem } = parse(SystemNameResponse, body);
      if (problem) return { problem };
      return value!.systemName === asked.systemName ? {} : { problem: `system name ${value!.systemName} stored, not ${asked.systemName}` };
    }
    case "schedule": {
      const { value, problem } = parse(SchedulePayload, body);
      if (problem) return { problem };
      if (etagValue(headers.get("etag")) !== value!.version) return { problem: "ETag is not the payload's version" };
      return { problem: payloadProblem(value!), version: value!.version };
    }
    case "legacy": {
      const { value, problem } = parse(ScheduleResponse, body);
      if (problem) return { problem };
      if (value!.email !== asked.email.trim().toLowerCase()) return { problem: `legacy answer for ${value!.email}` };
      return { problem: payloadProblem(value!), version: value!.version };
    }
  }
}
