// The edge entry: Supabase deploys this file as the function `api`, and `npm start` runs it as is.
import { createApp } from "../app/app.ts";
import { parseConfig } from "../app/config.ts";
import { onEdgeRuntime } from "../app/edge-runtime.ts";
import { importOptional } from "../app/import-optional.ts";
import { listenOn } from "../app/http/port-in-use.ts";
import { consoleLogger } from "../app/log.ts";
import { exitOnOperatorError } from "../app/operator-error.ts";
import { openRuntime } from "../app/runtime.ts";

let config;
try {
  config = parseConfig(Deno.env.toObject());
} catch (error) {
  exitOnOperatorError(error);
}

const runtime = await openRuntime(config, consoleLogger).catch(exitOnOperatorError);
const app = createApp(runtime.deps);

let shutdownServer: () => Promise<void>;
if (onEdgeRuntime()) {
  // Supabase's own server holds the connections: Deno.serve only hands this worker its requests.
  const server = Deno.serve(
    {
      port: config.PORT,
      onListen: ({ port }) => consoleLogger("info", "listening", { port, ...runtime.describe }),
    },
    (request, info) => app.fetch(request, { remoteAddr: info.remoteAddr.hostname }),
  );
  shutdownServer = () => server.shutdown();
} else {
  // Self-hosted, the process meets every client itself: Deno.serve kept listening through
  // descriptor exhaustion (app/http/self-hosted-server.ts), kept out of the edge bundle.
  const { serveSelfHosted } = await importOptional<typeof import("../app/http/self-hosted-server.ts")>(
    new URL("../app/http/self-hosted-server.ts", import.meta.url),
  );
  const server = await listenOn(config.PORT, "PORT", () =>
    serveSelfHosted({
      hostname: config.HOST,
      port: config.PORT,
      handler: (request, remoteAddr) => app.fetch(request, { remoteAddr }),
      log: consoleLogger,
    })
  ).catch(exitOnOperatorError);
  consoleLogger("info", "listening", {
    port: server.port,
    host: server.hostname,
    ...runtime.describe,
    fileDescriptorLimit: config.FILE_DESCRIPTOR_LIMIT ?? "unknown",
  });
  shutdownServer = () => server.shutdown();
}

async function shutdown() {
  await shutdownServer();
  await runtime.close();
  Deno.exit(0);
}

// The edge runtime manages its own lifecycle and may not offer signal listeners.
try {
  Deno.addSignalListener("SIGINT", shutdown);
  Deno.addSignalListener("SIGTERM", shutdown);
} catch {
  // Not supported here: the platform stops the worker itself.
}
