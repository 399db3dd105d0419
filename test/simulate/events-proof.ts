// `npm run events:proof`: issue 61, item 4, at full length: a throwaway PostgreSQL 15 migrated by the
// Supabase CLI, then test/events/delivery-proof.ts for --seconds (300) with the delivery worker
// killed with SIGKILL every --kill-every seconds (20), --keys keys (1,000) changed by staff and the
// platform, the receiver failing half of the requests (--seed). Prints the verdict as JSON and
// exits 1 when an event is missing, arrived under two webhook-ids or out of sequence. Then, for
// --receiver-up-seconds (60), the real server delivering to a receiver that accepts everything:
// test/events/delivery-latency.ts, the change-to-delivery p50, p99 and longest.
import process from "node:process";
import { parseArgs } from "node:util";
import { migratedDatabase } from "../bench/database.ts";
import { measureDeliveryLatency } from "../events/delivery-latency.ts";
import { proveDelivery } from "../events/delivery-proof.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "300" },
    "kill-every": { type: "string", default: "20" },
    keys: { type: "string", default: "1000" },
    seed: { type: "string", default: "61" },
    "receiver-up-seconds": { type: "string", default: "60" },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  console.log([
    "usage: npm run events:proof -- [--seconds 300] [--kill-every 20] [--keys 1000] [--seed 61] [--receiver-up-seconds 60]",
    "Issue 61's proof of event delivery: changes to --keys keys for --seconds against a throwaway PostgreSQL 15, the",
    "delivery worker killed with SIGKILL every --kill-every seconds, the receiver (standardwebhooks) failing half the",
    "requests at random. Prints the verdict as JSON; exits 1 when an event is missing, came under two webhook-ids or",
    "out of sequence. Then --receiver-up-seconds of the same changes with the real server delivering to a receiver",
    "that accepts everything: the change-to-delivery latency (p50, p99, longest), as JSON; exits 1 when an event is missing.",
  ].join("\n"));
  process.exit(0);
}
const root = new URL("../../", import.meta.url).pathname;
const database = await migratedDatabase();
try {
  const verdict = await proveDelivery({
    url: database.url,
    deno: process.execPath,
    root,
    seconds: Number(values.seconds),
    killEveryMs: Number(values["kill-every"]) * 1000,
    keys: Number(values.keys),
    seed: Number(values.seed),
    drainMs: 600_000,
  });
  console.log(JSON.stringify(verdict));
  const latency = await measureDeliveryLatency({ url: database.url, deno: process.execPath, root, seconds: Number(values["receiver-up-seconds"]), keys: Number(values.keys) });
  console.log(JSON.stringify({ receiverUp: latency }));
  process.exitCode = verdict.missing + verdict.underSeveralIds + verdict.outOfOrder + verdict.unverified + latency.missing + latency.unverified === 0 ? 0 : 1;
} finally {
  await database.server.stop();
}
