/// <reference lib="deno.ns" />
import { Buffer } from "node:buffer";
import postgres from "postgres";
import { REINSTATE, SUSPEND } from "../../functions/app/automations/calls.ts";
import { failures } from "../../functions/app/errors.ts";
import { signStandardWebhookRequest } from "../../functions/app/signatures/signed-request.ts";
import { judgeDelivery, type ServerKillVerdict } from "../events/delivery-verdict.ts";
import { openTestEndpoint } from "../events/test-endpoint.ts";
import { type RunningServer, startServer } from "../support/server.ts";
import { ChangeLedger } from "./change-ledger.ts";
import { insertFleet, layoutFleet } from "./fleet.ts";
import { openGateway } from "./gateway.ts";
import { runKiosk } from "./kiosk.ts";
import { Tally } from "./tally.ts";

// Issue 61, item 4, as the issue runs it: the real server (functions/api/index.ts on DATABASE_URL,
// self-hosted, so it delivers events as they are recorded and runs the minute's pass) is killed
// with SIGKILL every `killEveryMs` and started again, while a fleet of kiosks (the fleet
// simulation's, test/simulate/kiosk.ts) validates, names itself and polls through it, the
// automation platform suspends and reinstates keys with signed calls (Standard Webhooks) through
// it, retrying a call the kill cut under the same webhook-id, and staff edit keys and accounts in
// SQL, as the dashboard does. The receiver verifies every request with the `standardwebhooks`
// package and fails `receiverFails` of them at random. Then the last server drains what is owed,
// on the real clock's backoff, and the verdict compares what arrived with what was recorded.
// `npm run events:proof` runs it; test/events/server-kill-proof.test.ts a short version. Its
// verdict: ServerKillVerdict (test/events/delivery-verdict.ts).

export interface ServerKillOptions {
  /** A migrated database (superuser URL). */
  url: string;
  seconds: number;
  killEveryMs: number;
  kiosks: number;
  /** The share of deliveries the receiver fails, at random. */
  receiverFails: number;
  /** The platform's lifecycle calls a minute; under the limit of 60 a minute per client. */
  callsPerMinute: number;
  /** The longest the drain may take once the run ends. */
  drainMs: number;
  log: (line: string) => void;
}

/** The platform's address as the kiosks' gateway names clients, and its keys: accounts of their own, no kiosk. */
const PLATFORM_ADDRESS = "192.0.2.61";
const PLATFORM_KEYS = 100;
const platformKey = (n: number) => `PLTF-0000-0000-${String(n).padStart(4, "0")}`;
/** How often staff edit a platform key's time zone or its account's name. */
const STAFF_EVERY_MS = 500;
/** The kiosks' poll interval; a short run's is a sixth of it, so that a kiosk whose boot a kill cut boots within it. */
const POLL_MS = 20_000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

export async function proveDeliveryThroughKills(options: ServerKillOptions): Promise<ServerKillVerdict> {
  const sql = postgres(options.url, { max: 4, onnotice: () => {} });
  const endpoint = await openTestEndpoint(sql, { notifyEmail: "proof@example.com", answer: () => (Math.random() < options.receiverFails ? 500 : 200) });
  const secret = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`;
  const env = { DATABASE_URL: options.url, STANDARD_WEBHOOKS_SECRET: secret, CLIENT_IP_HEADER: "cf-connecting-ip" };
  let server: RunningServer | undefined;
  const gateway = openGateway(1_000);
  try {
    const fleet = layoutFleet(options.kiosks, { low: 1, high: 1 }, 0);
    await insertFleet(sql, fleet);
    const keys = Array.from({ length: PLATFORM_KEYS }, (_, n) => platformKey(n));
    await sql`insert into public.accounts (email, display_name) select lower(k) || '@platform.example', 'Platform ' || k from unnest(${keys}::text[]) as k`;
    await sql`
      insert into public.license_keys (key, account_id, email)
      select k, a.id, a.email from unnest(${keys}::text[]) as k join public.accounts as a on a.email = lower(k) || '@platform.example'`;
    server = await startServer(env);
    options.log(`${fleet.length} kiosks and ${keys.length} platform keys; the server is killed with SIGKILL every ${options.killEveryMs / 1000} s for ${options.seconds} s`);

    const started = performance.now();
    const now = () => performance.now() - started;
    const endAt = options.seconds * 1000;
    const pollMs = Math.min(POLL_MS, endAt / 6);
    const tally = new Tally();
    const killed = new Set<string>();
    let booted = 0;
    const context = {
      baseUrl: server.url, pollMs, jitter: 0.1, timeoutMs: 10_000, gateway, now, endAt, tally, ledger: new ChangeLedger(2 * pollMs), killed,
      booted: () => void booted++,
    };
    let kills = 0;
    const killer = (async () => {
      while (now() + options.killEveryMs < endAt) {
        await pause(options.killEveryMs);
        killed.add(server!.url);
        await server!.kill();
        kills += 1;
        server = await startServer(env);
        context.baseUrl = server.url;
      }
    })();
    const platform = { calls: 0, retried: 0, unexpected: [] as string[] };
    const calling = platformAtWork(keys, { ...options, secret, until: () => now() >= endAt, baseUrl: () => context.baseUrl, counts: platform });
    let staffEdits = 0;
    const editing = (async () => {
      while (now() < endAt) {
        const key = keys[Math.floor(Math.random() * keys.length)];
        if (Math.random() < 0.5) await sql`update public.license_keys set time_zone = ${Math.random() < 0.5 ? "Europe/Berlin" : "UTC"} where key = ${key}`;
        else await sql`update public.accounts set display_name = ${`Platform ${key} ${staffEdits}`} where email = ${`${key.toLowerCase()}@platform.example`}`;
        staffEdits += 1;
        await pause(STAFF_EVERY_MS);
      }
    })();
    await Promise.all([...fleet.map((kiosk) => runKiosk(kiosk, Math.random() * pollMs, context)), killer, calling, editing]);

    options.log(`run over: ${kills} kills; draining what is owed (at most ${options.drainMs / 60_000} min)`);
    const drainStart = performance.now();
    const reporting = setInterval(() => void endpoint.owed().then((owed) => options.log(`draining: ${owed} events owed`)), 30_000);
    const owedAtEnd = await endpoint.drain(options.drainMs).finally(() => clearInterval(reporting));
    const drainSeconds = Math.round((performance.now() - drainStart) / 1000);
    await server.stop();
    server = undefined;
    return {
      ...judgeDelivery(await endpoint.recorded(), endpoint.receiver.messages),
      kills,
      kiosks: {
        of: fleet.length, booted, requests: tally.requests, byStatus: tally.byStatus, unexpected: tally.unexpected,
        examples: [...tally.examples.values()].flat(),
      },
      platform,
      staffEdits,
      owedAtEnd,
      drainSeconds,
    };
  } finally {
    await server?.kill();
    gateway.close();
    await endpoint.receiver.close();
    await sql.end();
  }
}

/**
 * The automation platform: `callsPerMinute` signed calls, each suspending a key it holds active or
 * reinstating one it suspended. A call cut by a kill (no answer) or told to wait (429, 503, or 409
 * while its webhook-id is still held by a request a kill cut, until that claim's lease ends) is
 * sent again under the same webhook-id, after Retry-After, which the server answers once; any other
 * answer but 200 is unexpected.
 */
async function platformAtWork(
  keys: string[],
  plan: { callsPerMinute: number; secret: string; until: () => boolean; baseUrl: () => string; counts: ServerKillVerdict["platform"] },
) {
  const suspended = new Set<string>();
  for (let n = 0; !plan.until(); n++) {
    await pause(60_000 / plan.callsPerMinute);
    const key = keys[Math.floor(Math.random() * keys.length)];
    const call = suspended.has(key) ? REINSTATE : SUSPEND;
    const body = JSON.stringify({ type: call.name, license_key: key });
    const id = `msg_proof_${n}`;
    for (;;) {
      const signed = signStandardWebhookRequest(plan.secret, body, { nowMs: Date.now(), id });
      let status: number | undefined;
      let text = "";
      let retryAfter = 1;
      try {
        const response = await fetch(plan.baseUrl() + call.path, {
          method: "POST",
          headers: { ...signed.headers, "cf-connecting-ip": PLATFORM_ADDRESS },
          body: signed.body,
          signal: AbortSignal.timeout(10_000),
        });
        status = response.status;
        text = await response.text();
        retryAfter = Number(response.headers.get("retry-after") ?? 1);
      } catch {
        // Cut or refused by a kill: the same call again.
      }
      if (status === 200) {
        plan.counts.calls += 1;
        if (call === SUSPEND) suspended.add(key);
        else suspended.delete(key);
        break;
      }
      const toldToWait = status === 429 || status === 503 || (status === 409 && text === JSON.stringify(failures.idempotency_key_in_progress[1]));
      if (status !== undefined && !toldToWait) {
        plan.counts.unexpected.push(`${call.name} ${status}: ${text.slice(0, 200)}`);
        break;
      }
      plan.counts.retried += 1;
      await pause(retryAfter * 1000);
    }
  }
}
