// `npm run outbox:deliver`: one scheduled run, for self-hosters on Postgres to run from cron every
// minute: the offline-alert pass, the seat checks, delivery of the events owed to event endpoints,
// then delivery of the queued e-mails that are due. Its last line is the run's report
// (runScheduledPass): `{"sent":n,"failed":n,"alerts":{...},"events":{...}}`, and `authUsers`,
// `idempotencyKeysPurged` when they apply.
import { configFromEnvironment } from "../app/environment.ts";
import { consoleLogger } from "../app/log.ts";
import { orExitOnOperatorError } from "../app/operator-error.ts";
import { workerFromConfig } from "../app/worker-from-config.ts";
import { runScheduledPass } from "../app/scheduled-pass.ts";
import { type CommandLine, commandLine } from "./command-line.ts";

const usage = [
  "usage: npm run outbox:deliver",
  "One scheduled run, for cron every minute beside a server on Postgres: the offline-alert pass, the",
  "events owed to event endpoints, then the queued e-mails that are due. Reads the server's variables: DATABASE_URL (or SUPABASE_DB_URL),",
  "MAILER and its settings, SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY. Its last line is the run's",
  'report: {"sent":n,"failed":n,"alerts":{...}}. It takes no options.',
].join("\n");
const cli: CommandLine = commandLine(usage, 1);
cli.flags({});

const config = configFromEnvironment();
const outbox = orExitOnOperatorError(() => workerFromConfig(config, consoleLogger));
try {
  console.log(JSON.stringify(await runScheduledPass(outbox.ports)));
} finally {
  await outbox.close();
}
