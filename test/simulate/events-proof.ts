// `npm run events:proof`: issue 61, item 4, at full length: a throwaway PostgreSQL 15 migrated by the
// Supabase CLI, then test/events/delivery-proof.ts for --seconds (300) with the delivery worker
// killed with SIGKILL every --kill-every seconds (20), --keys keys (1,000) changed by staff and the
// platform, the receiver failing half of the requests (--seed). Prints the verdict as JSON and
// exits 1 when an event is missing, arrived under two webhook-ids or out of sequence.
import process from "node:process";
import { parseArgs } from "node:util";
import { migratedDatabase } from "../bench/database.ts";
import { proveDelivery } from "../events/delivery-proof.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "300" },
    "kill-every": { type: "string", default: "20" },
    keys: { type: "string", default: "1000" },
    seed: { type: "string", default: "61" },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  console.log([
    "usage: npm run events:proof -- [--seconds 300] [--kill-every 20] [--keys 1000] [--seed 61]",
    "Issue 61's proof of event delivery: changes to --keys keys for --seconds against a throwaway PostgreSQL 15, the",
    "delivery worker killed with SIGKILL every --kill-every seconds, the receiver (standardwebhooks) failing half the",
    "requests at random. Prints the verdict as JSON; exits 1 when an event is missing, came under two webhook-ids or",
    "out of sequence.",
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
  process.exitCode = verdict.missing + verdict.underSeveralIds + verdict.outOfOrder + verdict.unverified === 0 ? 0 : 1;
} finally {
  await database.server.stop();
}
