// The edge function `outbox`: pg_cron calls it every minute (supabase/README.md, "Deploying"), and each call runs
// the offline-alert pass, then delivers the queued e-mails that are due (its alerts included). A second job
// calls `/outbox/events` within a second of an event being owed, and that call only delivers events
// (functions/EVENTS.md). It takes no input and can only send what is already due, so an outside caller
// gains nothing by calling it.
import { isUnavailable } from "../app/db/unavailable.ts";
import { configFromEnvironment } from "../app/environment.ts";
import { failures } from "../app/errors.ts";
import { deliverEvents } from "../app/events/deliver-events.ts";
import { consoleLogger, errorMessage } from "../app/log.ts";
import { orExitOnOperatorError } from "../app/operator-error.ts";
import { workerFromConfig } from "../app/worker-from-config.ts";
import { runScheduledPass } from "../app/scheduled-pass.ts";

/**
 * The most one events call sends before it answers: the job calls again the next second while
 * something is due, and pg_net's request (timeout_milliseconds) outlasts it.
 */
const EVENTS_BUDGET_MS = 10_000;

const config = configFromEnvironment();
const { ports } = orExitOnOperatorError(() => workerFromConfig(config, consoleLogger));

const onListen = ({ port }: { port: number }) => consoleLogger("info", "listening", { port, function: "outbox" });
Deno.serve({ port: config.PORT, onListen }, async (request) => {
  if (request.method !== "POST") {
    return Response.json({ message: "use POST" }, { status: 405, headers: { allow: "POST" } });
  }
  if (/\/events\/?$/.test(new URL(request.url).pathname)) {
    try {
      const events = await deliverEvents(ports, { budgetMs: EVENTS_BUDGET_MS });
      consoleLogger("info", "events_delivered", { ...events });
      return Response.json({ events });
    } catch (error) {
      // The next second's job tries again; an outage is logged once where it starts (db/availability.ts).
      if (!isUnavailable(error)) consoleLogger("error", "event_delivery_failed", { error: errorMessage(error) });
      const [status, body] = failures.service_unavailable;
      return Response.json(body, { status, headers: { "retry-after": "1" } });
    }
  }
  const report = await runScheduledPass(ports);
  consoleLogger("info", "outbox_delivered", { ...report });
  return Response.json(report);
});
