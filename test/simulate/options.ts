import { parseArgs } from "node:util";
import { z } from "zod";
import { DEFAULT_PRICES } from "./cost.ts";

/** A range of whole numbers written `A-B`, or one number `N` (= `N-N`). */
const Range = z.string().regex(/^\d+(-\d+)?$/, "a number N or a range A-B").transform((text, context) => {
  const [low, high = low] = text.split("-").map(Number);
  if (low < 1 || high < low) context.addIssue({ code: "custom", message: "a range A-B with 1 <= A <= B" });
  return { low, high };
});
const share = z.coerce.number().min(0).max(1);
const positive = z.coerce.number().positive();

/** The fleet run's options, checked; defaults are the issue's. */
export const RunOptions = z.object({
  kiosks: z.coerce.number().int().positive().default(1000),
  minutes: positive.default(10),
  pollSeconds: positive.default(60),
  perAddress: Range.prefault("1-8"),
  legacyShare: share.default(0.1),
  changeShare: share.default(0.01),
  jitter: z.coerce.number().min(0).max(0.5).default(0.1),
  timeoutSeconds: positive.default(10),
  faults: z.boolean().default(false),
  json: z.string().optional(),
  darkShare: share.default(0.05),
  /** The fleet accounts' offline_alert_after; the database allows 60 s at least. */
  offlineSeconds: z.coerce.number().int().min(60).max(7 * 86_400).default(900),
  passSeconds: positive.default(60),
}).strict();
export type RunOptions = z.infer<typeof RunOptions>;

/** The cost estimate's options: a fleet size, a summary to read, and the list prices. */
export const CostOptions = z.object({
  costFor: z.coerce.number().int().positive(),
  summary: z.string(),
  invocationPrice: positive.default(DEFAULT_PRICES.invocationPrice),
  invocationsIncluded: z.coerce.number().min(0).default(DEFAULT_PRICES.invocationsIncluded),
  commandPrice: positive.default(DEFAULT_PRICES.commandPrice),
  planFee: z.coerce.number().min(0).default(DEFAULT_PRICES.planFee),
  computeCredit: z.coerce.number().min(0).default(DEFAULT_PRICES.computeCredit),
  utilisation: z.coerce.number().gt(0).max(1).default(DEFAULT_PRICES.utilisation),
  poolPerInstance: z.coerce.number().int().positive().default(DEFAULT_PRICES.poolPerInstance),
}).strict();
export type CostOptions = z.infer<typeof CostOptions>;

/** Every flag: its parseArgs type and the line `--help` prints. */
const FLAGS = {
  kiosks: { type: "string", help: "--kiosks N            kiosks in the fleet (1000)" },
  minutes: { type: "string", help: "--minutes M           run time, fractions allowed (10)" },
  "poll-seconds": { type: "string", help: "--poll-seconds S      each kiosk's poll interval (60)" },
  "per-address": { type: "string", help: "--per-address A-B     kiosks behind one venue address, drawn from A to B (1-8)" },
  "legacy-share": { type: "string", help: "--legacy-share S      share of kiosks polling the legacy schedule read (0.1)" },
  "change-share": { type: "string", help: "--change-share S      share of schedules staff change each minute, in SQL (0.01)" },
  jitter: { type: "string", help: "--jitter S            each poll interval varies by up to this share, either way (0.1)" },
  "timeout-seconds": { type: "string", help: "--timeout-seconds S   a kiosk gives up on an answer after this long (10)" },
  faults: { type: "boolean", help: "--faults              restart the database, pause it 3 s, restart Redis, during the run" },
  json: { type: "string", help: "--json FILE           write the summary there (it is always printed)" },
  "dark-share": { type: "string", help: "--dark-share S        share of kiosks that go dark (stop calling) and come back during the run (0.05)" },
  "offline-seconds": { type: "string", help: "--offline-seconds N   the fleet accounts' offline alert threshold, at least 60 (900, the default 15 minutes)" },
  "pass-seconds": { type: "string", help: "--pass-seconds S      how often the scheduled run (offline alerts, then outbox delivery) runs (60, as pg_cron)" },
  "cost-for": { type: "string", help: "--cost-for N          no run: the monthly cost of N kiosks, from --summary FILE" },
  summary: { type: "string", help: "--summary FILE        a summary written by --json" },
  "invocation-price": { type: "string", help: `--invocation-price $  per 1 million edge function invocations (${DEFAULT_PRICES.invocationPrice})` },
  "invocations-included": { type: "string", help: `--invocations-included N  in the plan each month (${DEFAULT_PRICES.invocationsIncluded})` },
  "command-price": { type: "string", help: `--command-price $     per 100,000 Upstash commands (${DEFAULT_PRICES.commandPrice})` },
  "plan-fee": { type: "string", help: `--plan-fee $          Supabase plan per month (${DEFAULT_PRICES.planFee})` },
  "compute-credit": { type: "string", help: `--compute-credit $    compute credits the plan gives per month (${DEFAULT_PRICES.computeCredit})` },
  utilisation: { type: "string", help: `--utilisation S       the share of a core the estimate lets the load use (${DEFAULT_PRICES.utilisation})` },
  "pool-per-instance": { type: "string", help: `--pool-per-instance N pooler connections each function instance holds (${DEFAULT_PRICES.poolPerInstance})` },
  help: { type: "boolean", help: "--help                this list" },
} as const;

export const USAGE = [
  "npm run simulate -- [options]        drive a simulated fleet against the production configuration",
  "npm run simulate -- --cost-for N --summary FILE [prices]   the monthly cost of N kiosks",
  "",
  ...Object.values(FLAGS).map((flag) => `  ${flag.help}`),
].join("\n");

export type Parsed = { mode: "help" } | { mode: "run"; options: RunOptions } | { mode: "cost"; options: CostOptions };

/** Reads the command line; throws with a message naming the flag when a value is wrong. */
export function parseOptions(args: string[]): Parsed {
  const options = Object.fromEntries(Object.entries(FLAGS).map(([name, { type }]) => [name, { type }]));
  const { values } = parseArgs({ args, options: options as Record<keyof typeof FLAGS, { type: "string" | "boolean" }> });
  if (values.help) return { mode: "help" };
  // parseArgs names flags in kebab-case; the schemas in camelCase.
  const camel = Object.fromEntries(Object.entries(values).map(([name, value]) => [name.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()), value]));
  const schema = values["cost-for"] === undefined ? RunOptions : CostOptions;
  const parsed = schema.safeParse(camel);
  if (!parsed.success) {
    const flag = (name: PropertyKey) => `--${String(name).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    throw new Error(parsed.error.issues.map((issue) =>
      issue.code === "unrecognized_keys"
        ? `${issue.keys.map(flag).join(", ")}: not an option ${values["cost-for"] === undefined ? "of a run" : "with --cost-for"}`
        : `${flag(issue.path[0] ?? "")}: ${issue.message}`
    ).join("\n"));
  }
  return values["cost-for"] === undefined
    ? { mode: "run", options: parsed.data as RunOptions }
    : { mode: "cost", options: parsed.data as CostOptions };
}
