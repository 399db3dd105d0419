import { type Asked, readAnswer, type Reading } from "./answer-check.ts";
import type { ChangeLedger } from "./change-ledger.ts";
import type { DarkLedger, DarkWindow } from "./dark-kiosks.ts";
import type { Kiosk } from "./fleet.ts";
import type { Gateway } from "./gateway.ts";
import { addressAt } from "./seats.ts";
import type { Tally } from "./tally.ts";

/** What every kiosk shares: where the API is, how it polls, until when, and where it reports. */
export interface KioskContext {
  /** Where the API is now: with --worker-life it moves to each new server process. */
  baseUrl: string;
  pollMs: number;
  /** Each interval is pollMs times 1 ± up to this share, drawn anew each time. */
  jitter: number;
  timeoutMs: number;
  /** The connections the kiosks' requests share to reach the server, as Supabase's gateway's (gateway.ts). */
  gateway: Gateway;
  /** The simulation's clock (ms); kiosks stop polling at `endAt`. */
  now(): number;
  endAt: number;
  tally: Tally;
  ledger: ChangeLedger;
  /** Told once of each kiosk booted: validated, named and served its first schedule. */
  booted(): void;
  /** When the fleet's dark kiosks stop calling, and where what they did is kept; absent: none goes dark. */
  dark?: { window: DarkWindow; ledger: DarkLedger };
  /**
   * Base URLs of servers killed with SIGKILL on purpose (events-proof): a request they cut or
   * refused is counted `killed`, as expected, and the kiosk tries again at its next look.
   */
  killed?: Set<string>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
/** Waits `ms`, or until the run ends if that comes first. */
const wait = (context: KioskContext, ms: number) => sleep(Math.min(ms, context.endAt - context.now()));

/** One request as the kiosk sends it (from its venue's address now), recorded and read. */
async function send(kiosk: Kiosk, context: KioskContext, asked: Asked, path: string, init: RequestInit = {}): Promise<Reading> {
  const headers = new Headers(init.headers);
  headers.set("cf-connecting-ip", addressAt(kiosk, context.now()));
  if (asked.ifNoneMatch) headers.set("if-none-match", asked.ifNoneMatch);
  const sentAt = context.now();
  const baseUrl = context.baseUrl;
  let response: Response;
  let body: string;
  let waitedMs: number;
  try {
    ({ response, body, waitedMs } = await context.gateway.fetch(baseUrl + path, { ...init, headers, signal: AbortSignal.timeout(context.timeoutMs) }));
  } catch (error) {
    if (context.killed?.has(baseUrl)) {
      context.tally.record(asked.route, sentAt, "killed", undefined, undefined);
      context.ledger.deferred(kiosk.key, context.pollMs * (1 + context.jitter));
      return { problem: "its server was killed" };
    }
    const timedOut = error instanceof DOMException && error.name === "TimeoutError";
    const problem = timedOut ? `no answer within ${context.timeoutMs} ms` : String(error);
    context.tally.record(asked.route, sentAt, timedOut ? "timeout" : "error", undefined, `${asked.route}: ${problem}`);
    return { problem };
  }
  const answeredAt = context.now();
  const reading = readAnswer(asked, { status: response.status, headers: response.headers, body });
  context.tally.record(asked.route, sentAt, String(response.status), answeredAt - sentAt, reading.problem && `${asked.route}: ${reading.problem}`, answerBytes(response, body), waitedMs);
  const stale = response.headers.has("age");
  if (stale) context.tally.stale++;
  if (reading.version !== undefined && response.status === 200) context.ledger.served(kiosk.key, reading.version, answeredAt);
  // An answer the database could not give defers the kiosk's next look by its wait.
  if (stale) context.ledger.deferred(kiosk.key, context.pollMs * (1 + context.jitter));
  if (response.status === 503 && reading.retryAfter !== undefined) context.ledger.deferred(kiosk.key, reading.retryAfter * 1000);
  return reading;
}

/**
 * The bytes of an answer as HTTP/1.1 carries it: status line, each header line, the blank line and
 * the body (what egress bills, before compression and TLS, which the gateway adds or removes).
 */
function answerBytes(response: Response, body: string): number {
  let bytes = `HTTP/1.1 ${response.status} ${response.statusText}\r\n\r\n`.length + new TextEncoder().encode(body).length;
  for (const [name, value] of response.headers) bytes += name.length + 2 + value.length + 2;
  return bytes;
}

/**
 * Sends a request until it is answered 200 (or the run ends), waiting out each 429 and 503 for
 * its Retry-After and anything else for a poll interval. True once answered.
 */
async function untilAnswered(kiosk: Kiosk, context: KioskContext, asked: Asked, path: string, init: RequestInit): Promise<boolean> {
  while (context.now() < context.endAt) {
    const reading = await send(kiosk, context, asked, path, init);
    if (reading.retryAfter !== undefined) await wait(context, reading.retryAfter * 1000);
    else if (reading.problem === undefined) return true;
    else await wait(context, context.pollMs);
  }
  return false;
}

/**
 * A kiosk's day, from `bootAt`: it validates its license and sets its system name, once each;
 * then it polls its schedule (the license schedule with If-None-Match, or the legacy read), right
 * away and then every poll interval with jitter, honouring Retry-After on 429 and 503.
 */
export async function runKiosk(kiosk: Kiosk, bootAt: number, context: KioskContext): Promise<void> {
  await sleep(bootAt - context.now());
  const json = { "content-type": "application/json" };
  const key = encodeURIComponent(kiosk.key);
  const validated = await untilAnswered(kiosk, context, { route: "license", key: kiosk.key, email: kiosk.email }, "/api/v2/license", {
    method: "POST",
    headers: json,
    body: JSON.stringify({ license_key: kiosk.key, email_address: kiosk.email }),
  });
  if (!validated) return;
  const named = await untilAnswered(
    kiosk,
    context,
    { route: "system-name", key: kiosk.key, email: kiosk.email, systemName: kiosk.systemName },
    `/api/v2/licenses/${key}/system-name`,
    { method: "PUT", headers: json, body: JSON.stringify({ systemName: kiosk.systemName }) },
  );
  if (!named) return;
  const path = kiosk.legacy
    ? `/api/v2/schedule?email=${encodeURIComponent(kiosk.email)}&licenseKey=${key}`
    : `/api/v2/licenses/${key}/schedule`;
  let etag: string | undefined;
  let booted = false;
  const dark = kiosk.dark ? context.dark : undefined;
  while (context.now() < context.endAt) {
    if (dark && context.now() >= dark.window.from && context.now() < dark.window.until) {
      // Dark: powered off, unplugged, off the network. It calls again when the window ends.
      await wait(context, dark.window.until - context.now());
      continue;
    }
    const asked: Asked = { route: kiosk.legacy ? "legacy" : "schedule", key: kiosk.key, email: kiosk.email, ifNoneMatch: etag };
    const reading = await send(kiosk, context, asked, path);
    if (dark && reading.problem === undefined && reading.retryAfter === undefined) dark.ledger.answered(kiosk, dark.window, context.now());
    if (reading.retryAfter !== undefined) {
      await wait(context, reading.retryAfter * 1000);
      continue;
    }
    if (!booted && reading.problem === undefined) {
      booted = true;
      context.booted();
    }
    if (!kiosk.legacy && reading.version !== undefined) etag = `"${reading.version}"`;
    await wait(context, context.pollMs * (1 + context.jitter * (2 * Math.random() - 1)));
  }
}
