import { z } from "@hono/zod-openapi";
import { Email } from "../email.ts";

/** Wall-clock `HH:MM` from 00:00 to 24:00 (an end of 24:00 is served as "24:00"). */
const clockTime = z.string().regex(/^(?:[01]\d|2[0-3]):[0-5]\d$|^24:00$/);
const minuteOfDay = z.number().int().min(0).max(1440);

export const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const;

export const ScheduleBlock = z
  .object({
    id: z.uuid(),
    startTime: clockTime.openapi({ example: "22:00" }),
    startMinutes: minuteOfDay,
    endTime: clockTime.openapi({ example: "06:00" }),
    endMinutes: minuteOfDay,
    overnight: z.boolean().openapi({ description: "True when the end clock time is at or before the start" }),
    durationMinutes: z.number().int().min(1).openapi({ description: "The wrap past midnight counts as the next day" }),
    dynamicAudio: z.boolean(),
    proclamationIds: z.array(z.uuid()).openapi({ description: "In play order; the same id may appear twice" }),
  })
  .openapi("ScheduleBlock");

export const ScheduleType = z.enum(["daily", "weekly"]).nullable();

/** What the database assembles (cadence.schedule_payload): everything but the version. */
export const ScheduleContent = z.object({
  type: ScheduleType,
  daily: z.array(ScheduleBlock),
  weekly: z.record(z.string(), z.array(ScheduleBlock)).openapi({
    description: "Exactly the keys monday .. sunday when type is weekly; {} otherwise",
  }),
  blocks: z.array(ScheduleBlock).openapi({ description: "Legacy daily flattening; [] unless type is daily" }),
});
export type ScheduleContent = z.infer<typeof ScheduleContent>;

export const SchedulePayload = ScheduleContent.extend({
  version: z.string().min(1).openapi({ description: "Content-derived hash; the ETag, quoted" }),
}).openapi("SchedulePayload");
export type SchedulePayload = z.infer<typeof SchedulePayload>;

/** Section 4.4: `email` and `blocks` are required; the other payload fields were added later. */
export const ScheduleResponse = SchedulePayload.partial({ version: true, type: true, daily: true, weekly: true })
  .extend({ email: Email })
  .openapi("ScheduleResponse");
export type ScheduleResponse = z.infer<typeof ScheduleResponse>;
