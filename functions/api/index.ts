// The edge entry: Supabase deploys this file as the function `api`, `npm start` runs it as is, and
// `npm run start:workers` runs it once per worker process (functions/production/supervisor.ts).
import { createApp } from "../app/app.ts";
import { admissionFromConfig } from "../app/http/admission.ts";
import { type AppFetch, timedFetch } from "../app/http/request-timing.ts";
import { onEdgeRuntime } from "../app/edge-runtime.ts";
import { configFromEnvironment, misspeltVariables } from "../app/environment.ts";
import { importOptional } from "../app/import-optional.ts";
import { listenOn } from "../app/http/port-in-use.ts";
import { consoleLogger, type Logger } from "../app/log.ts";
import { exitOnOperatorError } from "../app/operator-error.ts";
import { openRuntime } from "../app/runtime.ts";
import { START_USAGE } from "../app/start-usage.ts";
import { commandLine } from "../cli/command-line.ts";

// `npm start -- --help` prints the usage; any other argument is refused with it (the server reads
// only its environment).
if (!onEdgeRuntime()) commandLine(START_USAGE, 2).flags({});
const config = configFromEnvironment();

if (onEdgeRuntime()) {
  const runtime = await openRuntime(config, consoleLogger).catch(exitOnOperatorError);
  const app = createApp(runtime.deps);
  // An isolate serves several requests at once: one that asks for more than it serves is told
  // when to come back (http/admission.ts) rather than queued.
  const admitted = admissionFromConfig((request, env) => app.fetch(request, env), config, consoleLogger);
  // Supabase's own server holds the connections and checks its workers: Deno.serve only hands
  // this worker its requests.
  const server = Deno.serve(
    {
      port: config.PORT,
      onListen: ({ port }) => consoleLogger("info", "listening", { port, ...runtime.describe }),
    },
    (request, info) => admitted.fetch(request, { remoteAddr: info.remoteAddr.hostname }),
  );
  const shutdown = async () => {
    await server.shutdown();
    await runtime.close();
    Deno.exit(0);
  };
  // The edge runtime manages its own lifecycle and may not offer signal listeners.
  try {
    Deno.addSignalListener("SIGINT", shutdown);
    Deno.addSignalListener("SIGTERM", shutdown);
  } catch {
    // Not supported here: the platform stops the worker itself.
  }
} else {
  // Self-hosted, the process meets every client itself: Deno.serve kept listening through
  // descriptor exhaustion (app/http/self-hosted-server.ts), an admin listener on ADMIN_PORT
  // (app/admin/), a stop that drops no request (app/admin/graceful-stop.ts); all kept out of the
  // edge bundle.
  const [{ serveSelfHosted }, { openWorkerAdmin }, { gracefulStop }] = await Promise.all([
    importOptional<typeof import("../app/http/self-hosted-server.ts")>(new URL("../app/http/self-hosted-server.ts", import.meta.url)),
    importOptional<typeof import("../app/admin/worker-admin.ts")>(new URL("../app/admin/worker-admin.ts", import.meta.url)),
    importOptional<typeof import("../app/admin/graceful-stop.ts")>(new URL("../app/admin/graceful-stop.ts", import.meta.url)),
  ]);
  // A worker of `npm run start:workers` names itself on every line: their lines share one log.
  const worker = config.WORKER === undefined ? {} : { worker: config.WORKER };
  const log: Logger = config.WORKER === undefined ? consoleLogger : (level, event, fields) => consoleLogger(level, event, { ...fields, ...worker });
  for (const { variable, meant } of misspeltVariables()) {
    log("warn", "variable_not_read", { variable, reason: `${variable} is not a variable Cadence reads: did you mean ${meant}?` });
  }
  // A stop asked for while the start is under way (Ctrl-C during a first start) is made once the
  // start has its runtime, so the database it started stops with it; a second signal meanwhile
  // ends the process at once (a database left running is stopped by the next start).
  let stop: ((reason: string) => Promise<void>) | undefined;
  let stopAsked: string | undefined;
  const onSignal = (signal: string) => {
    if (stop) return void stop(signal);
    if (stopAsked) Deno.exit(130);
    stopAsked = signal;
    log("info", "stop_asked", { reason: signal, when: "once the start under way has finished; again to end it now" });
  };
  Deno.addSignalListener("SIGINT", () => onSignal("SIGINT"));
  Deno.addSignalListener("SIGTERM", () => onSignal("SIGTERM"));
  // A taken port is refused before any database work: a first start builds a database first.
  if (config.PORT !== 0) {
    await listenOn(config.PORT, "PORT", async () => Deno.listen({ hostname: config.HOST, port: config.PORT }).close()).catch(exitOnOperatorError);
  }
  const adminPort = config.ADMIN_PORT;
  // First, so /live answers while the start migrates.
  const admin = adminPort === undefined ? undefined : await openWorkerAdmin({ ...config, ADMIN_PORT: adminPort }, log).catch(exitOnOperatorError);
  const runtime = await openRuntime(config, log, admin?.metrics).catch(exitOnOperatorError);
  admin?.attach(runtime);
  const app = createApp(runtime.deps);
  // Overload is answered, not queued: past ADMISSION_LIMIT requests in flight and as many waiting
  // ADMISSION_QUEUE_MS, a request gets 503 with Retry-After before any work (http/admission.ts).
  // Timed around admission, so the request histogram counts the wait for a turn and the refusals.
  const admitted = admissionFromConfig((request, env) => app.fetch(request, env), config, log, admin?.metrics.requestShed);
  admin?.metrics.attachAdmission(admitted.use);
  const fetch: AppFetch = admitted.fetch;
  const answer = admin ? timedFetch(fetch, admin.metrics.observeRequest) : fetch;
  const server = await listenOn(config.PORT, "PORT", () =>
    serveSelfHosted({
      hostname: config.HOST,
      port: config.PORT,
      handler: (request, remoteAddr) => answer(request, { remoteAddr }),
      log,
    })
  ).catch(async (error) => {
    // Taken since the check above: what the start opened (its database) closes before the exit.
    await runtime.close();
    return exitOnOperatorError(error);
  });
  admin?.readiness.met("listening");
  log("info", "listening", {
    port: server.port,
    host: server.hostname,
    ...(admin && { adminPort: admin.listener.port }),
    pid: Deno.pid,
    ...runtime.describe,
    fileDescriptorLimit: config.FILE_DESCRIPTOR_LIMIT ?? "unknown",
  });
  // What the supervisor waits for in a rolling restart: ready, then seen ready by the proxy.
  void admin?.readiness.ready.then(() => log("info", "ready"));
  void admin?.readiness.checkedReady.then((checked) => log("info", "ready_checked", { checked }));

  stop = gracefulStop({
    readiness: admin?.readiness,
    stopServing: () => server.shutdown(),
    closeRuntime: () => runtime.close(),
    closeAdmin: admin && (() => admin.listener.close()),
    log,
    exit: (code) => Deno.exit(code),
  });
  if (stopAsked) void stop(stopAsked);
  // A worker of `npm run start:workers` reads its supervisor's pipe: its end means the supervisor
  // is gone (killed, crashed), and a worker left alone would hold its port for ever.
  if (config.WORKER !== undefined) void Deno.stdin.readable.pipeTo(new WritableStream()).finally(() => stop?.("supervisor gone"));
}
