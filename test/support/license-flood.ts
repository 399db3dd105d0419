/**
 * A burst of concurrent `POST /api/v2/license` through the proxy, run as a process of its own
 * (Deno) so that its TLS handshakes do not share an event loop with the kiosk reads the test
 * measures: those reads must time the proxy, not a test runner busy with the flood.
 *
 * Argument: JSON `{ port, ca, addresses, perAddress, body }`. Sends `perAddress` requests from each
 * address, all at once, each on a connection of its own, and prints one JSON line: every
 * `{ address, outcome }`, the outcome a status or the error code that ended the request.
 *
 * @example
 * deno run --allow-net test/support/license-flood.ts '{"port":8443,"ca":"-----BEGIN…","addresses":["127.0.2.1"],"perAddress":100,"body":"{}"}'
 */
import { request } from "node:https";
import process from "node:process";

interface Flood {
  port: number;
  ca: string;
  addresses: string[];
  perAddress: number;
  body: string;
}

const flood: Flood = JSON.parse(process.argv[2]);

function post(localAddress: string) {
  return new Promise<string>((resolve) => {
    const outgoing = request({
      host: "127.0.0.1", port: flood.port, path: "/api/v2/license", method: "POST", localAddress, agent: false,
      ca: flood.ca, servername: "localhost", headers: { "content-type": "application/json" },
    }, (incoming) => {
      incoming.resume();
      incoming.on("end", () => resolve(String(incoming.statusCode)));
      incoming.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    outgoing.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    outgoing.end(flood.body);
  });
}

const answers = await Promise.all(flood.addresses.flatMap((address) =>
  Array.from({ length: flood.perAddress }, async () => ({ address, outcome: await post(address) }))));
console.log(JSON.stringify(answers));
