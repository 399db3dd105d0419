/**
 * Kiosks calling through the proxy at a steady pace, run as a process of its own (Deno) so that
 * its TLS work does not share an event loop with the test that restarts the servers under it.
 *
 * Argument: JSON `{ port, ca, kiosks, everyMs, key, email }`. Each kiosk has a loopback address of
 * its own (127.4.x.y) and a kept-alive connection, as a kiosk's calls in a row share one, and calls
 * every `everyMs` in turn: its license schedule (with the ETag it holds: 200 or 304), the
 * frequencies, its entitled proclamations and a license validation. It prints `{"answered":n}`
 * after every 100 answers, and runs until its standard input closes; then it prints one JSON line:
 * how many calls were answered per status, every call that got no answer, by its error code, and
 * for each status other than 200 and 304 the first answer's body and `Retry-After`, so a failure
 * says which part sent it (the proxy and the app word their refusals differently).
 *
 * @example
 * deno run --allow-net test/support/steady-kiosks.ts '{"port":8443,"ca":"-----BEGIN…","kiosks":60,"everyMs":500,"key":"DEMO-0000-0000-0001","email":"demo@example.com"}'
 */
import { Agent, request } from "node:https";
import process from "node:process";

interface Load {
  port: number;
  ca: string;
  kiosks: number;
  everyMs: number;
  key: string;
  email: string;
}

const load: Load = JSON.parse(process.argv[2]);
/** A call unanswered by then has failed, as the simulator's kiosks count one (test/simulate/kiosk.ts). */
const ANSWER_WITHIN_MS = 10_000;

const statuses: Record<string, number> = {};
const failures: Record<string, number> = {};
const samples: Record<string, { body: string; retryAfter?: string }> = {};
let answered = 0;
let running = true;

interface Call {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

function send(agent: Agent, localAddress: string, call: Call) {
  return new Promise<{ status: number; etag?: string; body: string; retryAfter?: string } | { error: string }>((resolve) => {
    const outgoing = request({
      host: "127.0.0.1", port: load.port, path: call.path, method: call.method, headers: call.headers, localAddress, agent,
      ca: load.ca, servername: "localhost",
    }, (incoming) => {
      let body = "";
      incoming.setEncoding("utf8");
      incoming.on("data", (chunk: string) => (body += chunk));
      incoming.on("end", () => resolve({ status: incoming.statusCode ?? 0, etag: incoming.headers.etag, body, retryAfter: incoming.headers["retry-after"] }));
      incoming.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    });
    outgoing.setTimeout(ANSWER_WITHIN_MS, () => outgoing.destroy(Object.assign(new Error("unanswered"), { code: "ETIMEDOUT" })));
    outgoing.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    outgoing.end(call.body);
  });
}

async function kiosk(n: number) {
  const localAddress = `127.4.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let etag: string | undefined;
  const calls = (): Call[] => [
    { method: "GET", path: `/api/v2/licenses/${load.key}/schedule`, headers: etag ? { "if-none-match": etag } : {} },
    { method: "GET", path: "/api/v2/frequencies", headers: {} },
    { method: "GET", path: "/api/v2/proclamations", headers: { "x-license-key": load.key, "x-email": load.email } },
    {
      method: "POST", path: "/api/v2/license", headers: { "content-type": "application/json" },
      body: JSON.stringify({ license_key: load.key, email_address: load.email }),
    },
  ];
  // Spread over the first interval, so the calls arrive steadily rather than in waves.
  await new Promise((resolve) => setTimeout(resolve, (n / load.kiosks) * load.everyMs));
  for (let turn = 0; running; turn++) {
    const started = performance.now();
    const call = calls()[turn % 4];
    const outcome = await send(agent, localAddress, call);
    if ("error" in outcome) failures[outcome.error] = (failures[outcome.error] ?? 0) + 1;
    else {
      statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
      if (outcome.status !== 200 && outcome.status !== 304) samples[outcome.status] ??= { body: outcome.body.slice(0, 200), retryAfter: outcome.retryAfter };
      if (outcome.etag) etag = outcome.etag;
      if (++answered % 100 === 0) console.log(JSON.stringify({ answered }));
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, load.everyMs - (performance.now() - started))));
  }
  agent.destroy();
}

const kiosks = Array.from({ length: load.kiosks }, (_, n) => kiosk(n));
// The test closes our standard input when its restart is over: the kiosks finish the call each has under way.
for await (const _ of process.stdin) {
  // Nothing is sent on it; its end is the signal.
}
running = false;
await Promise.all(kiosks);
console.log(JSON.stringify({ statuses, failures, samples }));
