import { expect, it } from "vitest";
import { describeDirectOnly, scopedDatabase } from "../support/database.ts";
import { proveDelivery } from "./delivery-proof.ts";

// Issue 61, item 4, for the delivery worker on a fast clock: 6 s of changes to 40 keys with the
// worker killed with SIGKILL every 2 s and the receiver failing half of the requests
// (test/events/delivery-proof.ts). The whole server killed: server-kill-proof.test.ts.

const root = new URL("../../", import.meta.url).pathname;
const database = scopedDatabase();

describeDirectOnly("events as a receiver sees them, the worker killed and the receiver failing half the time", () => {
  it("every event arrives, duplicates only under the same webhook-id, none out of sequence per key", async () => {
    const verdict = await proveDelivery({
      url: database.url, deno: `${root}node_modules/.bin/deno`, root, seconds: 6, killEveryMs: 2_000, keys: 40, seed: 61, drainMs: 120_000,
    });
    expect(verdict.kills).toBeGreaterThan(1);
    expect(verdict.refused).toBeGreaterThan(0);
    expect(verdict).toMatchObject({ missing: 0, underSeveralIds: 0, outOfOrder: 0, unverified: 0 });
  });
});

