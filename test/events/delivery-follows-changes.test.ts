import { describe, expect, it, vi } from "vitest";
import { scopedDatabase } from "../support/database.ts";
import { startEventReceiver } from "../support/event-receiver.ts";
import { startServer } from "../support/server.ts";

// A running server delivers each change's events as they are recorded
// (functions/app/events/follow-events.ts), not at the next minute's scheduled pass (issue 61, item 4).

const database = scopedDatabase();

/**
 * Longer than any delivery by the follower takes, on any machine this suite runs on, and shorter
 * than the minute between the server's scheduled passes: a change still waiting for the pass
 * fails here. Not a speed bound (test/bench/results.md has the latencies).
 */
const BEFORE_THE_NEXT_PASS_MS = 30_000;

describe("events delivered by a running server", () => {
  it("reach the endpoint after each change, without waiting for the minute's scheduled pass", async () => {
    const [{ secret }] = await database.db.query<{ secret: string }>("select cadence.new_webhook_secret() as secret");
    const receiver = await startEventReceiver({ secret });
    // An endpoint is owed the events recorded once it exists.
    await database.db.query("insert into public.event_endpoints (url, secret, notify_email) values ($1, $2, 'staff@example.com')", [receiver.url, secret]);
    const key = "FLLW-0000-0000-0001";
    const [account] = await database.db.query<{ id: string }>("insert into public.accounts (email, display_name) values ('follow@example.com', 'Follow') returning id");
    await database.db.query("insert into public.license_keys (key, account_id, email) values ($1, $2, 'follow@example.com')", [key, account.id]);
    // Its first pass runs at start and delivers what was owed then; the next comes a minute later.
    const server = await startServer({ DATABASE_URL: database.url });
    try {
      await vi.waitFor(() => expect(receiver.accepted().map((event) => event.type)).toContain("license_key.created"), { timeout: BEFORE_THE_NEXT_PASS_MS, interval: 50 });
      const latencies: number[] = [];
      for (const change of ["suspend_license_key", "reinstate_license_key", "suspend_license_key"]) {
        const before = receiver.accepted().length;
        await database.db.query(`select * from cadence.${change}($1)`, [key]);
        await vi.waitFor(() => expect(receiver.accepted().length).toBeGreaterThan(before), { timeout: BEFORE_THE_NEXT_PASS_MS, interval: 20 });
        const event = receiver.accepted().at(-1)!;
        expect(event).toMatchObject({ type: change === "suspend_license_key" ? "license_key.suspended" : "license_key.reinstated", license_key: key });
        latencies.push(Date.now() - Date.parse(event.occurred_at));
      }
      console.log(`change to delivery through a running server, ms: ${latencies.join(", ")}`);
      expect(receiver.messages.every((message) => message.verified)).toBe(true);
    } finally {
      await server.stop();
      await receiver.close();
    }
  });
});
