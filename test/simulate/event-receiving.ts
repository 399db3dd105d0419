import type postgres from "postgres";
import { z } from "zod";
import { openTestEndpoint } from "../events/test-endpoint.ts";

// `--events` (issue 61, item 3): an automation platform's endpoint receives every event the run
// records, verifying each request with the `standardwebhooks` package; the summary says how the
// fleet's events reached it: how many requests, how many at once, the most in any one second,
// the largest message, and whether every event arrived. With `--dark-share 1` it is a regional
// outage: every kiosk goes dark at once, and comes back.

export const EventsReceived = z.object({
  batchSize: z.number().int(),
  /** Events recorded during the run, and those not accepted by its end. */
  recorded: z.number().int(),
  missing: z.number().int(),
  byType: z.record(z.string(), z.number().int()),
  messages: z.number().int(),
  unverified: z.number().int(),
  /** The most requests the receiver had in flight at once, and received within any one second. */
  mostInFlight: z.number().int(),
  mostInOneSecond: z.number().int(),
  largestMessage: z.number().int(),
});
export type EventsReceived = z.infer<typeof EventsReceived>;

/** An endpoint (the only one enabled) with its receiver; `judge` reads what arrived once the run has ended. */
export async function openEventReceiving(sql: postgres.Sql, batchSize = 100) {
  const endpoint = await openTestEndpoint(sql, { notifyEmail: "simulate@example.com", batchSize });
  const { receiver } = endpoint;
  return {
    /** Waits up to `drainMs` for what is owed, then counts. */
    async judge(drainMs: number): Promise<EventsReceived> {
      await endpoint.drain(drainMs);
      await receiver.close();
      const recorded = await endpoint.recorded();
      const accepted = new Set(receiver.accepted().map((event) => event.id));
      const byType: Record<string, number> = {};
      for (const event of recorded) byType[event.type] = (byType[event.type] ?? 0) + 1;
      const perSecond = new Map<number, number>();
      for (const message of receiver.messages) perSecond.set(Math.floor(message.receivedAt / 1000), (perSecond.get(Math.floor(message.receivedAt / 1000)) ?? 0) + 1);
      return {
        batchSize,
        recorded: recorded.length,
        missing: recorded.filter((event) => !accepted.has(event.id)).length,
        byType,
        messages: receiver.messages.length,
        unverified: receiver.messages.filter((message) => !message.verified).length,
        mostInFlight: receiver.mostInFlight(),
        mostInOneSecond: Math.max(0, ...perSecond.values()),
        largestMessage: Math.max(0, ...receiver.messages.map((message) => message.events.length)),
      };
    },
  };
}
