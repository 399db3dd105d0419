// `npm run events:proof`: issue 61, item 4, at full length, against a throwaway PostgreSQL 15
// migrated by the Supabase CLI. First test/simulate/server-kill-proof.ts for --seconds (300): the real
// server killed with SIGKILL every --kill-every seconds (20) while --kiosks kiosks (1,000) call it,
// the platform makes signed lifecycle calls and staff edit in SQL, the receiver failing
// --receiver-fails (half) of the deliveries at random; then the drain, on the real clock's backoff.
// Prints the verdict as JSON and exits 1 when an event is missing, arrived under two webhook-ids or
// out of sequence, or a kiosk or the platform was answered what it should not be. Then, for
// --receiver-up-seconds (60; 0 skips it), the real server delivering to a receiver that accepts
// everything: test/events/delivery-latency.ts, the change-to-delivery p50, p99 and longest.
import { writeFileSync } from "node:fs";
import process from "node:process";
import { parseArgs } from "node:util";
import { migratedDatabase } from "../bench/database.ts";
import { measureDeliveryLatency } from "../events/delivery-latency.ts";
import { holds } from "../events/delivery-verdict.ts";
import { proveDeliveryThroughKills } from "./server-kill-proof.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "300" },
    "kill-every": { type: "string", default: "20" },
    kiosks: { type: "string", default: "1000" },
    "receiver-fails": { type: "string", default: "0.5" },
    "calls-per-minute": { type: "string", default: "40" },
    "drain-minutes": { type: "string", default: "30" },
    "receiver-up-seconds": { type: "string", default: "60" },
    json: { type: "string" },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  console.log([
    "usage: npm run events:proof -- [--seconds 300] [--kill-every 20] [--kiosks 1000] [--receiver-fails 0.5] [--calls-per-minute 40]",
    "                               [--drain-minutes 30] [--receiver-up-seconds 60] [--json FILE]",
    "Issue 61's proof of event delivery against a throwaway PostgreSQL 15: for --seconds, the real server killed with SIGKILL",
    "every --kill-every seconds while --kiosks kiosks call it, the platform suspends and reinstates keys with signed calls",
    "(--calls-per-minute, at most 60) and staff edit keys in SQL; the receiver (standardwebhooks) fails --receiver-fails of",
    "the deliveries at random. Then the last server drains what is owed, for at most --drain-minutes, on the real backoff",
    "(5 s, doubling). Prints the verdict as JSON (and writes it to --json); exits 1 when an event is missing, came under",
    "two webhook-ids or out of sequence, or a kiosk or the platform got an answer it should not. Then --receiver-up-seconds",
    "(0 skips it) of changes with the server delivering to a receiver that accepts everything: the change-to-delivery",
    "latency (p50, p99, longest), as JSON; exits 1 when an event is missing.",
  ].join("\n"));
  process.exit(0);
}
const numbers = {
  seconds: Number(values.seconds), killEvery: Number(values["kill-every"]), kiosks: Number(values.kiosks), receiverFails: Number(values["receiver-fails"]),
  callsPerMinute: Number(values["calls-per-minute"]), drainMinutes: Number(values["drain-minutes"]), receiverUpSeconds: Number(values["receiver-up-seconds"]),
};
const wrong = Object.entries(numbers).filter(([name, n]) => !Number.isFinite(n) || n < 0 || (name === "receiverFails" && n > 1) || (name === "callsPerMinute" && (n <= 0 || n > 60)));
if (wrong.length > 0 || numbers.killEvery < 5) {
  console.error(`events:proof: ${[...wrong.map(([name]) => name), ...(numbers.killEvery < 5 ? ["kill-every (at least 5: a server takes seconds to start)"] : [])].join(", ")}: out of range (--help lists the options)`);
  process.exit(2);
}
const log = (line: string) => console.error(`events:proof: ${line}`);
const root = new URL("../../", import.meta.url).pathname;
log("starting PostgreSQL 15, migrated by the Supabase CLI");
const database = await migratedDatabase();
try {
  const verdict = await proveDeliveryThroughKills({
    url: database.url, seconds: numbers.seconds, killEveryMs: numbers.killEvery * 1000, kiosks: numbers.kiosks, receiverFails: numbers.receiverFails,
    callsPerMinute: numbers.callsPerMinute, drainMs: numbers.drainMinutes * 60_000, log,
  });
  console.log(JSON.stringify(verdict));
  if (values.json) writeFileSync(values.json, JSON.stringify(verdict, null, 2) + "\n");
  process.exitCode = holds(verdict) ? 0 : 1;
  if (numbers.receiverUpSeconds > 0) {
    const latency = await measureDeliveryLatency({ url: database.url, deno: process.execPath, root, seconds: numbers.receiverUpSeconds, keys: numbers.kiosks });
    console.log(JSON.stringify({ receiverUp: latency }));
    if (latency.missing + latency.unverified > 0) process.exitCode = 1;
  }
} finally {
  await database.server.stop();
}
