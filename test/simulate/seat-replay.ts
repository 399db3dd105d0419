// The seat checks' corpus in the fleet simulation (`--seat-patterns`): a key per pattern of
// seat-patterns.ts (fifty for the venue behind one NAT), in the demo account, each calling the
// production configuration over HTTP as its timeline says, in real time, from the timeline's
// addresses (cf-connecting-ip). A run of minutes judges the honest patterns (no flag) and finds the
// copies that started early enough; the day is seat-corpus.ts's, on a fast clock.
import type postgres from "postgres";
import { CLOSEST_CLOCKS_SQL, CLOSEST_SQL, type Closest, type ClosestClocks, judgePatterns, patternKeys, type PatternVerdict } from "./seat-corpus.ts";
import { type KioskRoute, type PatternCall, patternTimeline, SEAT_PATTERNS } from "./seat-patterns.ts";

/** The replayed keys' first two groups. */
const PREFIX = "SEAT-REAL";
const EMAIL = "demo@example.com";
const keysOf = (pattern: (typeof SEAT_PATTERNS)[number], n: number) => patternKeys(PREFIX, pattern, n);

/** Adds the patterns' keys to the demo account, and registers each pattern's shared venue address for its kiosks. */
export async function insertPatternKeys(sql: postgres.Sql): Promise<number> {
  const keys = SEAT_PATTERNS.flatMap((pattern, n) => keysOf(pattern, n));
  await sql`insert into public.license_keys (key, account_id, email)
            select k, a.id, a.email from unnest(${keys}::text[]) as k, public.accounts as a where a.email = ${EMAIL}`;
  for (const { venue } of SEAT_PATTERNS) {
    if (venue) {
      await sql`insert into public.venue_addresses (account_id, network, kiosks)
                select a.id, ${venue.address}::cidr, ${venue.kiosks} from public.accounts as a where a.email = ${EMAIL}`;
    }
  }
  return keys.length;
}

/** What the replayed calls were answered, per route and status. */
export type ReplayAnswers = Record<string, Record<string, number>>;

/** One call over HTTP, as a kiosk sends it; its status, or "error". */
async function send(baseUrl: string, key: string, ip: string, route: KioskRoute): Promise<string> {
  const headers: Record<string, string> = { "cf-connecting-ip": ip, "content-type": "application/json" };
  const request: Record<KioskRoute, [string, RequestInit]> = {
    license: ["/api/v2/license", { method: "POST", body: JSON.stringify({ license_key: key, email_address: EMAIL }) }],
    "system-name": [`/api/v2/licenses/${key}/system-name`, { method: "PUT", body: JSON.stringify({ systemName: `Kiosk ${key.slice(-9)}` }) }],
    schedule: [`/api/v2/licenses/${key}/schedule`, {}],
    proclamations: ["/api/v2/proclamations", { headers: { ...headers, "x-license-key": key, "x-email": EMAIL } }],
  };
  const [path, init] = request[route];
  try {
    const response = await fetch(baseUrl + path, { headers, ...init, signal: AbortSignal.timeout(10_000) });
    await response.body?.cancel();
    return String(response.status);
  } catch {
    return "error";
  }
}

/**
 * Sends every pattern's calls for `runMs` at their moments of the run (`now`: ms into it), each
 * device's in order, to `baseUrl()` (it moves with --worker-life); returns the answers per route.
 */
export async function replayPatterns(baseUrl: () => string, runMs: number, now: () => number): Promise<ReplayAnswers> {
  const answers: ReplayAnswers = {};
  const devices = new Map<string, Array<PatternCall & { keyName: string }>>();
  SEAT_PATTERNS.forEach((pattern, n) => {
    for (const call of patternTimeline(pattern, n, runMs)) {
      const id = `${n}/${call.device}`;
      if (!devices.has(id)) devices.set(id, []);
      devices.get(id)!.push({ ...call, keyName: keysOf(pattern, n)[call.key] });
    }
  });
  await Promise.all([...devices.values()].map(async (calls) => {
    for (const call of calls) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, call.at - now())));
      const status = await send(baseUrl(), call.keyName, call.ip, call.route);
      const byStatus = (answers[call.route] ??= {});
      byStatus[status] = (byStatus[status] ?? 0) + 1;
    }
  }));
  return answers;
}

/** Judges the replayed patterns from the seat checks' suspicions and the keys' counts at the end, for a run that started at `startedAt` (epoch ms). */
export async function judgeReplay(sql: postgres.Sql, startedAt: number, runMs: number): Promise<PatternVerdict[]> {
  const keys = SEAT_PATTERNS.flatMap((pattern, n) => keysOf(pattern, n));
  const flags = await sql<{ key: string; rules: string[]; first_ms: number }[]>`
    select license_key as key, rules, (extract(epoch from first_flagged_at) * 1000)::float8 as first_ms
      from public.seat_suspicions where license_key = any(${keys}::text[])`;
  const closest = await sql.unsafe<Array<Closest & { key: string }>>(CLOSEST_SQL, [keys]);
  const closestClocks = await sql.unsafe<Array<ClosestClocks & { key: string }>>(CLOSEST_CLOCKS_SQL, [keys]);
  return judgePatterns(
    SEAT_PATTERNS,
    keysOf,
    new Map(flags.map((row) => [row.key, { rules: row.rules, firstMs: row.first_ms }])),
    new Map(closest.map(({ key, ...rest }) => [key, rest])),
    new Map(closestClocks.map(({ key, ...rest }) => [key, rest])),
    startedAt,
    runMs,
  );
}
