// The edge entry: Supabase deploys this file as the function `api`, and `npm start` runs it as is.
import { createApp } from "../app/app.ts";
import { ConfigError, parseConfig } from "../app/config.ts";
import { consoleLogger } from "../app/log.ts";
import { openRuntime } from "../app/runtime.ts";

let config;
try {
  config = parseConfig(Deno.env.toObject());
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  Deno.exit(1);
}

const runtime = await openRuntime(config, consoleLogger);
const app = createApp(runtime.deps);

const server = Deno.serve(
  {
    port: config.PORT,
    onListen: ({ port }) => consoleLogger("info", "listening", { port, ...runtime.describe }),
  },
  (request, info) => app.fetch(request, { remoteAddr: info.remoteAddr.hostname }),
);

async function shutdown() {
  await server.shutdown();
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
