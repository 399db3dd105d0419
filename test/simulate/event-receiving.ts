import type postgres from "postgres";
import { z } from "zod";
import { startEventReceiver } from "../support/event-receiver.ts";

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
  const [{ secret }] = await sql<{ secret: string }[]>`select cadence.new_webhook_secret() as secret`;
  const receiver = await startEventReceiver({ secret });
  await sql`update public.event_endpoints set enabled = false, disabled_at = now() where enabled`;
  const [endpoint] = await sql<{ id: string }[]>`
    insert into public.event_endpoints (url, secret, batch_size, notify_email) values (${receiver.url}, ${secret}, ${batchSize}, 'simulate@example.com') returning id`;
  const [{ first }] = await sql<{ first: string }[]>`select coalesce(max("position"), 0)::text as first from public.events`;
  return {
    /** Waits up to `drainMs` for what is owed, then counts. */
    async judge(drainMs: number): Promise<EventsReceived> {
      const until = Date.now() + drainMs;
      for (;;) {
        const [{ owed }] = await sql<{ owed: number }[]>`
          select count(*)::integer as owed from public.event_deliveries where endpoint_id = ${endpoint.id} and delivered_at is null`;
        if (owed === 0 || Date.now() > until) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      await receiver.close();
      const recorded = await sql<{ id: string; type: string }[]>`select id, type from public.events where "position" > ${first}::bigint`;
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
