// A delivery worker for the delivery proof (test/events/delivery-proof.ts), run under Deno and killed
// with SIGKILL at any moment: the app's own followEvents, as a server runs it, on a clock CLOCK_RATE
// times faster than the real one from CLOCK_EPOCH (ms), so that backoffs and leases pass in seconds.
// A failed round (a statement past its deadline on a busy machine) is retried, as in the server; a
// loop of its own once let such an error end the worker, and the drain waited for nobody.
import process from "node:process";
import { openPostgres } from "../../functions/app/db/postgres.ts";
import { followEvents } from "../../functions/app/events/follow-events.ts";

const epoch = Number(process.env.CLOCK_EPOCH);
const rate = Number(process.env.CLOCK_RATE);
const now = () => epoch + (Date.now() - epoch) * rate;
const db = openPostgres(process.env.DATABASE_URL!, { max: 2 });
await followEvents({ db, now, log: () => {} }, { signal: new AbortController().signal, everyMs: 20 });
