// The edge function `outbox`: pg_cron calls it every minute (supabase/README.md, "Deploying"), and each call runs
// the offline-alert pass, then delivers the queued e-mails that are due (its alerts included). It takes no input and can only send what is already due, so an
// outside caller gains nothing by calling it.
import { configFromEnvironment } from "../app/environment.ts";
import { consoleLogger } from "../app/log.ts";
import { orExitOnOperatorError } from "../app/operator-error.ts";
import { workerFromConfig } from "../app/worker-from-config.ts";
import { runScheduledPass } from "../app/scheduled-pass.ts";

const config = configFromEnvironment();
const { ports } = orExitOnOperatorError(() => workerFromConfig(config, consoleLogger));

const onListen = ({ port }: { port: number }) => consoleLogger("info", "listening", { port, function: "outbox" });
Deno.serve({ port: config.PORT, onListen }, async (request) => {
  if (request.method !== "POST") {
    return Response.json({ message: "use POST" }, { status: 405, headers: { allow: "POST" } });
  }
  const report = await runScheduledPass(ports);
  consoleLogger("info", "outbox_delivered", { ...report });
  return Response.json(report);
});
