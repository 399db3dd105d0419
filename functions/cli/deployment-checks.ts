// The checks `npm run check` runs against a deployment, from outside and over HTTP only. Each
// sends at most a few requests, in order, so one run stays under every rate limit (6 of the 10
// validations a minute, 1 license-schedule read) unless --limits is asked for.
import type { z } from "zod";
import { Category, ColorPalette, Frequency, Group, Proclamation } from "../app/catalogue/schemas.ts";
import { type FailureCode, failures } from "../app/errors.ts";
import { MOST_PROXIES } from "../app/http/client-ip.ts";
import { generateLicenseKey } from "../app/onboarding/license-key-generator.ts";
import { signOnboardingRequest } from "../app/signatures/signed-request.ts";
import { ONBOARDING_PATH } from "../app/signatures/spec-signature.ts";

/** A check's verdict: resolves to what it saw, or throws `CheckFailed` saying what was wrong. */
export interface Check {
  name: string;
  run(): Promise<string>;
}

export class CheckFailed extends Error {
  override name = "CheckFailed";
}

/** What the operator asked for beyond the read-only checks. */
export interface CheckOptions {
  /** The deployment's base URL, e.g. https://<ref>.supabase.co/functions/v1 */
  baseUrl: string;
  /** How requests are sent: `fetch` with a client that trusts `--ca`'s certificate, or the plain `fetch`. */
  fetch?: typeof fetch;
  /** Probe the per-IP limit with forged client-IP headers (spends this IP's minute of it). */
  limits: boolean;
  /** Sign one onboarding of `email` with `secret` (creates that account). */
  onboarding?: { secret: string; email: string };
}

/** How long a check waits for an answer before it fails. */
const ANSWER_WITHIN_MS = 10_000;

/** The contract's paths, each of which the OpenAPI document must declare. */
const SPEC_PATHS = [
  "/api/v2/categories",
  "/api/v2/proclamation-categories",
  "/api/v2/groups",
  "/api/v2/proclamation-groups",
  "/api/v2/frequencies",
  "/api/v2/color-palettes",
  "/api/v2/proclamations",
  "/api/v2/license",
  "/api/v2/schedule",
  "/api/v2/licenses/{licenseKey}/schedule",
  "/api/v2/licenses/{licenseKey}/system-name",
  ONBOARDING_PATH,
];

/** The request headers a browser-based kiosk sends cross-origin: a preflight must allow each. */
const KIOSK_HEADERS = ["content-type", "if-none-match", "x-license-key", "x-email"];

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** The beginning of a body, for a failure message. */
const excerpt = (text: string) => (text.length > 120 ? `${text.slice(0, 120)}…` : text);

/** Where the checks send their requests, and how. */
interface Target {
  url: string;
  fetch: typeof fetch;
}

/**
 * Why the TLS client refused the server's certificate, in the operator's words, from rustls' reason
 * (Deno's fetch says only `fetch failed`; the reason is in its cause's message).
 */
const CERTIFICATE_REFUSALS: Array<[RegExp, string]> = [
  [/CaUsedAsEndEntity/, "the server's certificate is a CA certificate (basicConstraints CA:TRUE) served as its own, which TLS clients refuse: make a leaf (npm run -s certificate) or get a real one (certbot)"],
  [/UnknownIssuer/, "the server's certificate is not signed by an authority this machine trusts: for a self-signed one, pass it with --ca <file>; for a real one, serve its whole chain (certbot's fullchain.pem)"],
  [/NotValidForName/, "the server's certificate does not name this URL's host: ask for the name it was made for, or make one for this host"],
  [/Expired/, "the server's certificate has expired: renew it (certbot renew, or npm run -s certificate)"],
  [/NotValidYet/, "the server's certificate is not valid yet: check this machine's clock and the server's"],
];

/** An error and its causes' messages, outermost first: `fetch failed` hides the reason in its cause. */
function messagesOf(error: unknown): string[] {
  const messages: string[] = [];
  for (let at: unknown = error; at instanceof Error && messages.length < 5; at = at.cause) messages.push(at.message);
  return messages.length > 0 ? messages : [String(error)];
}

/** Why no answer came: a refused certificate named with what to do, else the innermost cause. */
function noAnswer(error: unknown): string {
  const messages = messagesOf(error);
  const text = messages.join(": ");
  const refusal = /invalid peer certificate: (\S+)/.exec(text);
  if (refusal) {
    const advice = CERTIFICATE_REFUSALS.find(([reason]) => reason.test(refusal[1]))?.[1];
    return `TLS: certificate refused (${refusal[1]}): ${advice ?? "see the reason in parentheses"}`;
  }
  return messages[messages.length - 1];
}

/** Sends one request; a network error or a missing answer is the check's failure. */
async function call(target: Target, path: string, init: RequestInit = {}): Promise<Answer> {
  let response: Response;
  try {
    response = await target.fetch(`${target.url}${path}`, { ...init, redirect: "manual", signal: AbortSignal.timeout(ANSWER_WITHIN_MS) });
  } catch (error) {
    throw new CheckFailed(`no answer: ${noAnswer(error)}`);
  }
  return { status: response.status, headers: response.headers, text: await response.text() };
}

function expectStatus(answer: Answer, status: number): void {
  if (answer.status === status) return;
  const limited = answer.status === 429 ? " (rate limited: this IP ran the check within the last minute; wait and run it again)" : "";
  throw new CheckFailed(`expected ${status}, got ${answer.status}${limited}: ${excerpt(answer.text)}`);
}

function parseJson(answer: Answer): unknown {
  try {
    return JSON.parse(answer.text);
  } catch {
    throw new CheckFailed(`not JSON: ${excerpt(answer.text)}`);
  }
}

/** The JSON body, as `schema` accepts it. */
function parseWith<Schema extends z.ZodType>(answer: Answer, schema: Schema): z.output<Schema> {
  const parsed = schema.safeParse(parseJson(answer));
  if (parsed.success) return parsed.data;
  const [issue] = parsed.error.issues;
  throw new CheckFailed(`unexpected body at ${issue.path.join(".") || "the top"}: ${issue.message}`);
}

/** A 200 whose JSON body `schema` accepts. */
async function read<Schema extends z.ZodType>(target: Target, path: string, schema: Schema): Promise<z.output<Schema>> {
  const answer = await call(target, path);
  expectStatus(answer, 200);
  return parseWith(answer, schema);
}

/** A failure answer whose body is exactly what `code` answers (errors.ts, the contract's texts). */
function expectFailure(answer: Answer, code: FailureCode): string {
  const [status, body] = failures[code];
  expectStatus(answer, status);
  const received = JSON.stringify(parseJson(answer));
  if (received !== JSON.stringify(body)) throw new CheckFailed(`expected ${JSON.stringify(body)}, got ${excerpt(answer.text)}`);
  return `${status} ${received}`;
}

/** The values of a comma-separated header, lower-cased. */
const listOf = (value: string | null) => (value ?? "").toLowerCase().split(",").map((item) => item.trim()).filter(Boolean);

function expectListed(header: string, value: string | null, wanted: string[]): void {
  const missing = wanted.filter((item) => !listOf(value).includes(item.toLowerCase()));
  if (missing.length > 0) throw new CheckFailed(`${header} lacks ${missing.join(", ")} (got ${JSON.stringify(value)})`);
}

/** A key of the contract's shape that no one holds: drawn at random for each run, 36^16 to one. */
const absentKey = () => generateLicenseKey();

/** An alias path answers the same payload as the path it stands for: an array of `item`. */
function aliasCheck(target: Target, path: string, alias: string, schema: z.ZodType, what: string): Check {
  return {
    name: `GET ${alias} (alias of ${path})`,
    async run() {
      const [original, aliased] = [await call(target, path), await call(target, alias)];
      expectStatus(aliased, 200);
      const items = parseWith(aliased, schema.array());
      if (aliased.text !== original.text) throw new CheckFailed(`answers a different payload from ${path}`);
      return `${items.length} ${what}, the same payload`;
    },
  };
}

function catalogueChecks(target: Target): Check[] {
  return [
    {
      name: "GET /api/v2/categories",
      run: async () => `${(await read(target, "/api/v2/categories", Category.array())).length} categories`,
    },
    aliasCheck(target, "/api/v2/categories", "/api/v2/proclamation-categories", Category, "categories"),
    {
      name: "GET /api/v2/groups",
      async run() {
        const groups = await read(target, "/api/v2/groups", Group.array());
        const ordered = groups.every((group, i) => i === 0 || groups[i - 1].sortOrder <= group.sortOrder);
        if (!ordered) throw new CheckFailed("groups are not in sortOrder");
        return `${groups.length} groups, by sortOrder`;
      },
    },
    aliasCheck(target, "/api/v2/groups", "/api/v2/proclamation-groups", Group, "groups"),
    {
      name: "GET /api/v2/frequencies",
      async run() {
        const frequencies = await read(target, "/api/v2/frequencies", Frequency.array());
        const ids = frequencies.map((frequency) => frequency.id).sort((a, b) => a - b).join(",");
        if (ids !== "1,2,3,4,5,6,7,8,9") throw new CheckFailed(`expected exactly the ids 1 to 9, got [${ids}]`);
        return "9 frequencies, ids 1 to 9";
      },
    },
    {
      name: "GET /api/v2/color-palettes",
      async run() {
        const palettes = await read(target, "/api/v2/color-palettes", ColorPalette.array());
        const ids = palettes.map((palette) => palette.solfeggioFrequencyId).sort((a, b) => a - b).join(",");
        if (ids !== "1,2,3,4,5,6,7,8,9") throw new CheckFailed(`expected one palette per id 1 to 9, got [${ids}]`);
        return "9 palettes, one per id 1 to 9";
      },
    },
    {
      name: "GET /api/v2/proclamations",
      run: async () => `${(await read(target, "/api/v2/proclamations", Proclamation.array())).length} proclamations`,
    },
  ];
}

function documentCheck(target: Target): Check {
  return {
    name: "GET /api/v2/openapi.json",
    async run() {
      const answer = await call(target, "/api/v2/openapi.json");
      expectStatus(answer, 200);
      const document = parseJson(answer) as { openapi?: unknown; paths?: Record<string, unknown> };
      if (document.openapi !== "3.1.0") throw new CheckFailed(`expected OpenAPI 3.1.0, got ${JSON.stringify(document.openapi)}`);
      const missing = SPEC_PATHS.filter((path) => !(path in (document.paths ?? {})));
      if (missing.length > 0) throw new CheckFailed(`the document lacks ${missing.join(", ")}`);
      return `OpenAPI 3.1.0, all ${SPEC_PATHS.length} spec paths`;
    },
  };
}

function unknownLicenseCheck(target: Target): Check {
  return {
    name: "GET /api/v2/licenses/{a key no one holds}/schedule",
    // A key of the right shape reaches the database, so this also shows the database answers.
    run: async () => expectFailure(await call(target, `/api/v2/licenses/${absentKey()}/schedule`), "unknown_license"),
  };
}

function validationChecks(target: Target): Check[] {
  const json = { "content-type": "application/json" };
  const cases: Array<{ what: string; init: RequestInit; code: FailureCode }> = [
    { what: "without a JSON content type", init: { headers: { "content-type": "text/plain" }, body: "{}" }, code: "content_type" },
    { what: "with malformed JSON", init: { headers: json, body: "{" }, code: "invalid_json" },
    { what: "with an empty body", init: { headers: json, body: "" }, code: "body_required" },
    { what: "without license_key", init: { headers: json, body: JSON.stringify({ email_address: "check@example.com" }) }, code: "license_key_required" },
    { what: "without email_address", init: { headers: json, body: JSON.stringify({ license_key: absentKey() }) }, code: "email_address_required" },
    {
      what: "with a key no one holds",
      init: { headers: json, body: JSON.stringify({ license_key: absentKey(), email_address: "check@example.com" }) },
      code: "license_not_found",
    },
  ];
  return cases.map(({ what, init, code }) => ({
    name: `POST /api/v2/license ${what}`,
    run: async () => expectFailure(await call(target, "/api/v2/license", { method: "POST", ...init }), code),
  }));
}

function protocolChecks(target: Target): Check[] {
  const origin = "https://kiosk.example";
  return [
    {
      name: "DELETE /api/v2/groups (a wrong method)",
      async run() {
        const answer = await call(target, "/api/v2/groups", { method: "DELETE" });
        const seen = expectFailure(answer, "method_not_allowed");
        expectListed("Allow", answer.headers.get("allow"), ["GET"]);
        return `${seen}, Allow: ${answer.headers.get("allow")}`;
      },
    },
    {
      name: "OPTIONS /api/v2/license (a CORS preflight)",
      async run() {
        const answer = await call(target, "/api/v2/license", {
          method: "OPTIONS",
          headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": KIOSK_HEADERS.join(",") },
        });
        if (answer.status < 200 || answer.status > 299) throw new CheckFailed(`expected a 2xx, got ${answer.status}`);
        const allowOrigin = answer.headers.get("access-control-allow-origin");
        if (allowOrigin !== "*" && allowOrigin !== origin) throw new CheckFailed(`Access-Control-Allow-Origin is ${JSON.stringify(allowOrigin)}`);
        expectListed("Access-Control-Allow-Methods", answer.headers.get("access-control-allow-methods"), ["GET", "POST", "PUT"]);
        expectListed("Access-Control-Allow-Headers", answer.headers.get("access-control-allow-headers"), KIOSK_HEADERS);
        return `${answer.status}, any origin, the kiosk's methods and headers allowed`;
      },
    },
    {
      name: "GET /api/v2/groups from another origin (CORS)",
      async run() {
        const answer = await call(target, "/api/v2/groups", { headers: { origin } });
        expectStatus(answer, 200);
        const allowOrigin = answer.headers.get("access-control-allow-origin");
        if (allowOrigin !== "*" && allowOrigin !== origin) throw new CheckFailed(`Access-Control-Allow-Origin is ${JSON.stringify(allowOrigin)}`);
        expectListed("Access-Control-Expose-Headers", answer.headers.get("access-control-expose-headers"), ["ETag", "Retry-After"]);
        return "readable from any origin, ETag and Retry-After exposed";
      },
    },
  ];
}

/** Reads of one route, each claiming another client in every client-IP header: 11 must meet the limit of 10. */
const PROBE_READS = 11;

/**
 * The headers of a read that claims to come from `forged`, in every header a deployment may read
 * the client from (CLIENT_IP_HEADER): X-Real-IP, CF-Connecting-IP, and X-Forwarded-For holding it in
 * every position `x-forwarded-for` or `x-forwarded-for:N` reads, so whichever the deployment uses,
 * it sees the forged address unless a proxy it trusts wrote that header itself.
 */
const forgedClient = (forged: string) => ({
  "x-real-ip": forged,
  "cf-connecting-ip": forged,
  "x-forwarded-for": Array(MOST_PROXIES).fill(forged).join(", "),
});

/**
 * Whether every read counted in the same bucket: each one's RateLimit-Remaining below the one
 * before, but for at most one window reset in the middle. A bucket per forged address would
 * answer the same remaining every time.
 */
function countedInOneBucket(answers: Answer[]): boolean {
  const remaining = answers.map((answer) => Number(answer.headers.get("ratelimit-remaining")));
  if (remaining.some((value) => !Number.isFinite(value))) return false;
  const rises = remaining.slice(1).filter((value, i) => value >= remaining[i]).length;
  return rises <= 1;
}

/**
 * The limit probe tests what the deployment does, not what it is configured to do: each read forges
 * another client, so a deployment that believes it counts every read in a fresh bucket, and one
 * that does not counts them all in this caller's. That shows from outside the trust any setting
 * gives (TRUST_PROXY, CLIENT_IP_HEADER, TRUSTED_PROXIES holding 0.0.0.0/0), with nothing exposed by
 * the server for it. Run against the workers' port from a machine that is not a proxy, it shows
 * whether that port believes strangers.
 */
function limitsCheck(target: Target): Check {
  const onSupabase = new URL(target.url).hostname.endsWith(".supabase.co");
  const advice = onSupabase
    ? "set CLIENT_IP_HEADER=cf-connecting-ip (supabase secrets set), or x-forwarded-for:1 if Supabase's last proxy appends"
    : "set CLIENT_IP_HEADER to the header your proxy writes (x-real-ip, cf-connecting-ip), or x-forwarded-for:N behind N proxies that append, and TRUSTED_PROXIES to the proxies' addresses only (never 0.0.0.0/0 or ::/0); with no proxy in front, unset TRUST_PROXY. From a proxy's own address (loopback by default) the header is believed by design: run this from another machine";
  return {
    name: `GET /api/v2/licenses/{key}/schedule ×${PROBE_READS}, each with a forged client IP (per-IP limit)`,
    async run() {
      const key = absentKey();
      const answers: Answer[] = [];
      for (let i = 0; i < PROBE_READS; i += 1) {
        const forged = `198.18.${i}.${1 + Math.floor(Math.random() * 254)}`;
        answers.push(await call(target, `/api/v2/licenses/${key}/schedule`, { headers: forgedClient(forged) }));
      }
      const first429 = answers.findIndex((answer) => answer.status === 429);
      if (first429 >= 0) return `limits hold: read ${first429 + 1} of ${PROBE_READS} got 429, forged client IPs opened no bucket`;
      if (answers.every((answer) => !answer.headers.has("ratelimit-limit"))) {
        throw new CheckFailed("no answer carried RateLimit headers: the limiter's store did not answer (kiosk routes fail open); check its URL and token");
      }
      const limit = Number(answers.at(-1)!.headers.get("ratelimit-limit"));
      if (countedInOneBucket(answers)) {
        if (limit >= PROBE_READS) {
          return `limits hold: the ${PROBE_READS} reads counted in one bucket of ${limit} a minute, above the interface's 10: this address is a registered venue (public.venue_addresses), whose allowance the probe cannot exhaust`;
        }
        // The limits count in fixed windows of a minute: reads that straddle the window's end split
        // between two, and none reaches the limit, though all counted in this caller's bucket.
        return `limits hold: the ${PROBE_READS} reads counted in one bucket of ${limit} a minute, whose window ended between them, so none got 429`;
      }
      throw new CheckFailed(`limits do not hold: ${PROBE_READS} reads with forged X-Forwarded-For, X-Real-IP and CF-Connecting-IP all passed, so callers choose their own bucket; ${advice}`);
    },
  };
}

function onboardingCheck(target: Target, { secret, email }: { secret: string; email: string }): Check {
  return {
    name: `POST ${ONBOARDING_PATH} (signed, onboards ${email})`,
    async run() {
      const signed = await signOnboardingRequest(secret, JSON.stringify({ email }));
      const answer = await call(target, ONBOARDING_PATH, { method: "POST", ...signed });
      if (answer.status === 401) throw new CheckFailed("401 invalid signature: the secret is not the deployment's SIGNING_SECRET (or this machine's clock is off by over 300 s)");
      expectStatus(answer, 200);
      const body = parseJson(answer) as { success?: unknown; user_id?: unknown };
      if (body.success !== true || typeof body.user_id !== "string") throw new CheckFailed(`unexpected body: ${excerpt(answer.text)}`);
      return `account ${body.user_id} ready, its key e-mailed`;
    },
  };
}

/**
 * Every check the options ask for, in the order they run: the catalogue, the proclamation list and
 * the OpenAPI document, the contract's failures, methods and CORS; then the limit probe and the signed
 * onboarding when asked.
 *
 * @example
 * for (const check of deploymentChecks({ baseUrl: "http://localhost:8000", limits: false })) await check.run();
 */
export function deploymentChecks(options: CheckOptions): Check[] {
  const target: Target = { url: options.baseUrl.replace(/\/+$/, ""), fetch: options.fetch ?? fetch };
  return [
    ...catalogueChecks(target),
    documentCheck(target),
    unknownLicenseCheck(target),
    ...validationChecks(target),
    ...protocolChecks(target),
    ...(options.limits ? [limitsCheck(target)] : []),
    ...(options.onboarding ? [onboardingCheck(target, options.onboarding)] : []),
  ];
}
