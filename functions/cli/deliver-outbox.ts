// `npm run outbox:deliver`: one delivery pass over the queued e-mails that are due, for
// self-hosters on Postgres to run from cron. Prints `{"sent":n,"failed":n}`.
import { ConfigError, parseConfig } from "../app/config.ts";
import { consoleLogger } from "../app/log.ts";
import { outboxFromConfig } from "../app/mail/outbox-from-config.ts";
import { deliverPending } from "../app/mail/outbox.ts";

let outbox;
try {
  outbox = outboxFromConfig(parseConfig(Deno.env.toObject()), consoleLogger);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  Deno.exit(1);
}
try {
  console.log(JSON.stringify(await deliverPending(outbox.ports)));
} finally {
  await outbox.close();
}
