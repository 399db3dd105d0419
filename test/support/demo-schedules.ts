import type { ScheduleContent } from "../../functions/app/schedule/schemas.ts";

/** The demo proclamations the seed's schedules play. */
export const ABUNDANCE = "b0000000-0000-4000-8000-000000000001";
export const PEACE = "b0000000-0000-4000-8000-000000000002";
export const CLARITY = "b0000000-0000-4000-8000-000000000003";

/** The daily schedule of demo@example.com, read by DEMO-0000-0000-0001 (and 0003), exactly as served. */
const daily = [
  {
    id: "d0000000-0000-4000-8000-000000000001",
    startTime: "06:00", startMinutes: 360, endTime: "09:00", endMinutes: 540,
    overnight: false, durationMinutes: 180, dynamicAudio: false, proclamationIds: [ABUNDANCE, PEACE],
  },
  {
    id: "d0000000-0000-4000-8000-000000000002",
    startTime: "12:00", startMinutes: 720, endTime: "12:30", endMinutes: 750,
    overnight: false, durationMinutes: 30, dynamicAudio: true, proclamationIds: [CLARITY],
  },
  {
    id: "d0000000-0000-4000-8000-000000000003",
    startTime: "22:00", startMinutes: 1320, endTime: "06:00", endMinutes: 360,
    overnight: true, durationMinutes: 480, dynamicAudio: false, proclamationIds: [PEACE, ABUNDANCE],
  },
];

export const DEMO_DAILY: ScheduleContent = { type: "daily", daily, weekly: {}, blocks: daily };

/** The weekly schedule of DEMO-0000-0000-0002 itself, exactly as served. */
export const DEMO_WEEKLY: ScheduleContent = {
  type: "weekly",
  daily: [],
  weekly: {
    monday: [
      {
        id: "d0000000-0000-4000-8000-000000000004",
        startTime: "08:00", startMinutes: 480, endTime: "10:00", endMinutes: 600,
        overnight: false, durationMinutes: 120, dynamicAudio: false, proclamationIds: [ABUNDANCE],
      },
    ],
    tuesday: [],
    wednesday: [
      {
        id: "d0000000-0000-4000-8000-000000000005",
        startTime: "20:00", startMinutes: 1200, endTime: "20:00", endMinutes: 1200,
        overnight: true, durationMinutes: 1440, dynamicAudio: true, proclamationIds: [CLARITY],
      },
    ],
    thursday: [],
    friday: [],
    saturday: [],
    sunday: [
      {
        id: "d0000000-0000-4000-8000-000000000006",
        startTime: "00:00", startMinutes: 0, endTime: "24:00", endMinutes: 1440,
        overnight: false, durationMinutes: 1440, dynamicAudio: false, proclamationIds: [PEACE, CLARITY],
      },
    ],
  },
  blocks: [],
};

/** What a key with no schedule of its own or of its account reads. */
export const NO_SCHEDULE: ScheduleContent = { type: null, daily: [], weekly: {}, blocks: [] };
