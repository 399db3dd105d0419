// A delivery worker for the delivery proof (test/events/delivery-proof.ts), run under Deno and killed
// with SIGKILL at any moment: the app's own deliverEvents in a loop, on a clock CLOCK_RATE times
// faster than the real one from CLOCK_EPOCH (ms), so that backoffs and leases pass in seconds.
import process from "node:process";
import { openPostgres } from "../../functions/app/db/postgres.ts";
import { deliverEvents } from "../../functions/app/events/deliver-events.ts";

const epoch = Number(process.env.CLOCK_EPOCH);
const rate = Number(process.env.CLOCK_RATE);
const now = () => epoch + (Date.now() - epoch) * rate;
const db = openPostgres(process.env.DATABASE_URL!, { max: 2 });
const ports = { db, now, log: () => {} };
for (;;) {
  const report = await deliverEvents(ports, { budgetMs: 1_000 * rate });
  if (report.messages + report.failed === 0) await new Promise((resolve) => setTimeout(resolve, 20));
}
