import { z } from "zod";
import type { ReceivedMessage } from "../support/event-receiver.ts";
import type { RecordedEvent } from "./test-endpoint.ts";

const count = z.number().int().min(0);

/** Issue 61's rules for what a receiver got: a run holds when `missing`, `underSeveralIds`, `outOfOrder` and `unverified` are all 0. */
export const DeliveryVerdict = z.object({
  events: count,
  messages: count,
  /** Requests the receiver answered with a failure. */
  refused: count,
  /** Events recorded but never accepted. */
  missing: count,
  /** Events accepted under more than one webhook-id. */
  underSeveralIds: count,
  /** Events that arrived, for the first time, after a later one of their key (or account). */
  outOfOrder: count,
  /** Requests the `standardwebhooks` package did not verify. */
  unverified: count,
  /** Accepted again under the same webhook-id: at-least-once's duplicates, allowed. */
  duplicates: count,
});
export type DeliveryVerdict = z.infer<typeof DeliveryVerdict>;

/** The server kill proof's verdict (test/simulate/server-kill-proof.ts), as `npm run events:proof` prints it. */
export const ServerKillVerdict = DeliveryVerdict.extend({
  kills: count,
  kiosks: z.object({ of: count, booted: count, requests: count, byStatus: z.record(z.string(), count), unexpected: count, examples: z.array(z.string()) }),
  /** The platform's signed calls answered 200, those sent again (cut by a kill, or told to wait), and any other answer. */
  platform: z.object({ calls: count, retried: count, unexpected: z.array(z.string()) }),
  staffEdits: count,
  /** Events still owed when the drain ended, and how long it took. */
  owedAtEnd: count,
  drainSeconds: count,
});
export type ServerKillVerdict = z.infer<typeof ServerKillVerdict>;

/** Whether a server kill proof holds: every event delivered as the rules say, every kiosk booted, every answer expected. */
export const holds = (verdict: ServerKillVerdict) =>
  verdict.missing + verdict.underSeveralIds + verdict.outOfOrder + verdict.unverified + verdict.owedAtEnd + verdict.kiosks.unexpected + verdict.platform.unexpected.length === 0 &&
  verdict.kiosks.booted === verdict.kiosks.of;

/** What arrived at the receiver, judged against what was recorded. */
export function judgeDelivery(recorded: RecordedEvent[], messages: ReceivedMessage[]): DeliveryVerdict {
  const accepted = messages.filter((message) => message.verified && message.status >= 200 && message.status < 300);
  const idsOf = new Map<string, Set<string>>();
  const lastOf = new Map<string, number>();
  let outOfOrder = 0;
  let duplicates = 0;
  for (const message of accepted) {
    for (const event of message.events) {
      const ids = idsOf.get(event.id) ?? new Set<string>();
      if (idsOf.has(event.id)) {
        duplicates += 1;
      } else {
        const stream = event.license_key ?? event.account_id ?? "";
        if (event.sequence !== (lastOf.get(stream) ?? event.sequence - 1) + 1) outOfOrder += 1;
        lastOf.set(stream, event.sequence);
      }
      ids.add(message.webhookId);
      idsOf.set(event.id, ids);
    }
  }
  return {
    events: recorded.length,
    messages: messages.length,
    refused: messages.filter((message) => message.status >= 300).length,
    missing: recorded.filter((event) => !idsOf.has(event.id)).length,
    underSeveralIds: [...idsOf.values()].filter((ids) => ids.size > 1).length,
    outOfOrder,
    unverified: messages.filter((message) => !message.verified).length,
    duplicates,
  };
}
