import type { RequestShape } from "./wrk.ts";

/**
 * What a scenario is compared against: (1) `fixed-json`, a bare Deno.serve answering the
 * scenario's own payload as fixed bytes, the runtime's limit; (2) `trivial-query`, a bare
 * Deno.serve running `select 1` through the app's driver and pool, the limit for any endpoint
 * that must touch the database.
 */
export type BaselineKind = "fixed-json" | "trivial-query";

export interface Scenario extends RequestShape {
  name: string;
  /** The URL's path, which a probe requests; a fleet scenario's load sends `RequestShape.path` instead, when it has one. */
  path: string;
  /** The status a correct answer has (checked once before the load; a 404 means the route is missing). */
  status: number;
  /** Send If-None-Match with the ETag a plain GET of the same path returned. */
  conditional?: boolean;
  baseline: BaselineKind;
  /** The least share of the baseline's requests/s this scenario must reach. */
  target: number;
  /** The path each request of the load sends, `{n}` and `{i}` filled in (RequestShape.path). */
  fleetPath?: string;
}

/**
 * The benchmark's own fleet: keys `BNCH-0000-0000-0000` to `BNCH-0000-0000-0999` of the demo
 * account, added to the bench database only. A scenario with `fleet` cycles through them.
 */
export const FLEET_KEYS = 1000;
const FLEET_KEY = "BNCH-0000-0000-{n}";
export const fleetKey = (n: number) => FLEET_KEY.replace("{n}", String(n).padStart(4, "0"));

/**
 * The names fleet: 20,000 named keys of one account (`names@example.com`), `NAMS-0000-0000-0000` to
 * `NAMS-0000-0001-9999`, added to the bench database only: a name write is checked against every
 * name of its account. The name-write scenario renames the first `NAME_WRITE_KEYS` in turn.
 */
export const NAME_FLEET_KEYS = 20_000;
const NAME_WRITE_KEYS = 10_000;
export const nameFleetKey = (n: number) => `NAMS-0000-${String(Math.floor(n / 10_000)).padStart(4, "0")}-${String(n % 10_000).padStart(4, "0")}`;

let probes = 0;
/** The body a probe sends for a scenario: the fleet's first key for `{n}`, and a mark of its own for `{i}`. */
export const probeBody = (scenario: Scenario) => scenario.body?.replace("{n}", "0000").replace("{i}", `probe-${++probes}`);

const demoKey = "DEMO-0000-0000-0001";
const demoEmail = "demo@example.com";

/** The scenarios of issue 8, in the order they run. */
export const scenarios: Scenario[] = [
  { name: "frequencies", method: "GET", path: "/api/v2/frequencies", status: 200, baseline: "fixed-json", target: 0.5 },
  { name: "proclamations (all)", method: "GET", path: "/api/v2/proclamations", status: 200, baseline: "fixed-json", target: 0.5 },
  {
    name: "proclamations (entitled)", method: "GET", path: "/api/v2/proclamations", status: 200,
    headers: { "x-license-key": demoKey, "x-email": demoEmail }, baseline: "trivial-query", target: 0.7,
  },
  { name: "license schedule 200", method: "GET", path: `/api/v2/licenses/${demoKey}/schedule`, status: 200, baseline: "trivial-query", target: 0.7 },
  {
    name: "license schedule 304", method: "GET", path: `/api/v2/licenses/${demoKey}/schedule`, status: 304, conditional: true,
    baseline: "trivial-query", target: 0.85,
  },
  {
    name: "legacy schedule", method: "GET", path: `/api/v2/schedule?email=${encodeURIComponent(demoEmail)}&licenseKey=${demoKey}`,
    status: 200, baseline: "trivial-query", target: 0.7,
  },
  {
    name: "license validation", method: "POST", path: "/api/v2/license", status: 200,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ license_key: demoKey, email_address: demoEmail }), baseline: "trivial-query", target: 0.7,
  },
  {
    // The scenario above sends one key, so its validations batch into one write; kiosks each send their own.
    name: `license validation, ${FLEET_KEYS.toLocaleString("en")} keys`, method: "POST", path: "/api/v2/license", status: 200,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ license_key: FLEET_KEY, email_address: demoEmail }), fleet: FLEET_KEYS,
    baseline: "trivial-query", target: 0.7,
  },
  {
    // Each request renames a key of a 20,000-key account to a name no key has ({i}), so each is a
    // write whose name is checked against the account's 20,000 names (issue 59: one name per look).
    name: `system-name write, ${NAME_FLEET_KEYS.toLocaleString("en")} keys in one account`, method: "PUT",
    path: `/api/v2/licenses/${nameFleetKey(0)}/system-name`, status: 200,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ systemName: "Kiosk {i}" }), fleet: NAME_WRITE_KEYS, fleetPath: "/api/v2/licenses/NAMS-0000-0000-{n}/system-name",
    baseline: "trivial-query", target: 0.3,
  },
];

/** The scenarios whose name holds one of `parts`; all of them when none is given. */
export const selectScenarios = (parts: string[]): Scenario[] =>
  parts.length === 0 ? scenarios : scenarios.filter((s) => parts.some((part) => s.name.includes(part)));

/** Targets every scenario shares. */
export const P99_TARGET_MS = 25;
export const RSS_TARGET_MIB = 200;
