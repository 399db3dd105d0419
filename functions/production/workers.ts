// The production start (`npm run start:workers`): `deno serve --parallel` runs this module in one
// worker per core (DENO_JOBS), all on one port, behind the reverse proxy configured beside it. The
// script passes HOST (loopback by default) to `deno serve --host`: the port is the proxy's alone.
import { createApp } from "../app/app.ts";
import { parseConfig } from "../app/config.ts";
import { isAddressInUse, PortInUseError } from "../app/http/port-in-use.ts";
import { consoleLogger } from "../app/log.ts";
import { exitOnOperatorError } from "../app/operator-error.ts";
import { openRuntime } from "../app/runtime.ts";
import { refuseUnshared } from "../app/shared-by-workers.ts";

let config;
try {
  config = parseConfig(Deno.env.toObject());
  // Deno's own count when DENO_JOBS is unset: one worker per available core.
  refuseUnshared(config, config.DENO_JOBS ?? navigator.hardwareConcurrency);
} catch (error) {
  exitOnOperatorError(error);
}

// `deno serve` binds --port (PORT, in package.json) in code of its own once this module is
// evaluated: a port in use reaches the worker only as an unhandled rejection.
const port = config.PORT;
globalThis.addEventListener("unhandledrejection", (event) => {
  if (!isAddressInUse(event.reason)) return;
  event.preventDefault();
  exitOnOperatorError(new PortInUseError(port, "PORT"));
});

const runtime = await openRuntime(config, consoleLogger).catch(exitOnOperatorError);
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
