// The production start (`npm run start:workers`): `deno serve --parallel` runs this module in one
// worker per core (DENO_JOBS), all on one port, behind the reverse proxy configured beside it. The
// script passes HOST (loopback by default) to `deno serve --host`: the port is the proxy's alone.
import { createApp } from "../app/app.ts";
import { ConfigError, parseConfig } from "../app/config.ts";
import { consoleLogger } from "../app/log.ts";
import { openRuntime } from "../app/runtime.ts";
import { refuseUnshared } from "../app/shared-by-workers.ts";

let config;
try {
  config = parseConfig(Deno.env.toObject());
  // Deno's own count when DENO_JOBS is unset: one worker per available core.
  refuseUnshared(config, config.DENO_JOBS ?? navigator.hardwareConcurrency);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  Deno.exit(1);
}

const runtime = await openRuntime(config, consoleLogger);
const app = createApp(runtime.deps);

// Each worker writes what it holds (kiosk sightings) before the process ends.
async function shutdown() {
  await runtime.close();
  Deno.exit(0);
}
Deno.addSignalListener("SIGINT", shutdown);
Deno.addSignalListener("SIGTERM", shutdown);

// `deno serve` listens on TCP here (--host, --port), so every address is a Deno.NetAddr.
export default {
  fetch: (request, info) => app.fetch(request, { remoteAddr: (info.remoteAddr as Deno.NetAddr).hostname }),
  onListen: (address) =>
    consoleLogger("info", "listening", {
      port: (address as Deno.NetAddr).port,
      workers: config.DENO_JOBS ?? navigator.hardwareConcurrency,
      // Where deno serve listens in fact (its --host), which the script, not this module, chose.
      host: (address as Deno.NetAddr).hostname,
      ...runtime.describe,
    }),
} satisfies Deno.ServeDefaultExport;
