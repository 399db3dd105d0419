import type postgres from "postgres";
import { type ReceivedMessage, startEventReceiver } from "../support/event-receiver.ts";

/** An event as recorded, for judging what a receiver got: its stream (key, or account) and sequence. */
export interface RecordedEvent {
  id: string;
  type: string;
  stream: string;
  sequence: number;
  /** When its change's transaction started, epoch ms. */
  occurred: number;
}

/**
 * The one enabled endpoint of a proof or a run, with its receiver (test/support/event-receiver.ts,
 * which verifies every request with the `standardwebhooks` package): every other endpoint is
 * disabled, and only events recorded from now on are judged. `answer` fails requests, `clock` is
 * the sender's fast clock (and the endpoint's first attempt is due at its start).
 *
 * @example
 * const endpoint = await openTestEndpoint(sql, { notifyEmail: "proof@example.com" });
 * await endpoint.drain(120_000);
 * const recorded = await endpoint.recorded();
 */
export async function openTestEndpoint(
  sql: postgres.Sql,
  options: { notifyEmail: string; batchSize?: number; answer?: (message: ReceivedMessage) => number; clock?: () => number },
) {
  const [{ secret }] = await sql<{ secret: string }[]>`select cadence.new_webhook_secret() as secret`;
  const receiver = await startEventReceiver({ secret, answer: options.answer, clock: options.clock });
  await sql`update public.event_endpoints set enabled = false, disabled_at = now() where enabled`;
  const [{ first }] = await sql<{ first: string }[]>`select coalesce(max("position"), 0)::text as first from public.events`;
  const dueAt = new Date(options.clock?.() ?? Date.now()).toISOString();
  const [endpoint] = await sql<{ id: string }[]>`
    insert into public.event_endpoints (url, secret, batch_size, notify_email, next_attempt_at)
    values (${receiver.url}, ${secret}, ${options.batchSize ?? 100}, ${options.notifyEmail}, ${dueAt}) returning id`;
  return {
    receiver,
    /** Events the endpoint still owes. */
    async owed(): Promise<number> {
      const [{ owed }] = await sql<{ owed: number }[]>`
        select count(*)::integer as owed from public.event_deliveries where endpoint_id = ${endpoint.id} and delivered_at is null`;
      return owed;
    },
    /** Waits until the endpoint owes nothing, or `withinMs` has passed; resolves with what is still owed. */
    async drain(withinMs: number): Promise<number> {
      const until = Date.now() + withinMs;
      for (;;) {
        const owed = await this.owed();
        if (owed === 0 || Date.now() > until) return owed;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    /** Every event recorded since the endpoint opened, in the order recorded. */
    recorded: () =>
      sql<RecordedEvent[]>`
        select id, type, coalesce(license_key, account_id::text) as stream, sequence::float8 as sequence,
               (extract(epoch from occurred_at) * 1000)::float8 as occurred
          from public.events where "position" > ${first}::bigint order by "position"`,
  };
}
