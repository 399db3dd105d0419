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
  path: string;
  /** The status a correct answer has (checked once before the load; a 404 means the route is missing). */
  status: number;
  /** Send If-None-Match with the ETag a plain GET of the same path returned. */
  conditional?: boolean;
  baseline: BaselineKind;
  /** The least share of the baseline's requests/s this scenario must reach. */
  target: number;
}

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
];

/** Targets every scenario shares. */
export const P99_TARGET_MS = 25;
export const RSS_TARGET_MIB = 200;
