// `npm run outbox:deliver`: one scheduled run, for self-hosters on Postgres to run from cron every
// minute: the offline-alert pass, then delivery of the queued e-mails that are due. Its last line is
// the run's report (runScheduledPass): `{"sent":n,"failed":n,"alerts":{...}}`, and `authUsers`,
// `idempotencyKeysPurged` when they apply.
import { ConfigError, parseConfig } from "../app/config.ts";
import { consoleLogger } from "../app/log.ts";
import { workerFromConfig } from "../app/worker-from-config.ts";
import { runScheduledPass } from "../app/scheduled-pass.ts";

let outbox;
try {
  outbox = workerFromConfig(parseConfig(Deno.env.toObject()), consoleLogger);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  Deno.exit(1);
}
try {
  console.log(JSON.stringify(await runScheduledPass(outbox.ports)));
} finally {
  await outbox.close();
}
