import { parseArgs } from "node:util";
import { z } from "zod";
import { DEFAULT_PRICES, type Prices } from "./cost.ts";

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
  /** Connections the kiosks' requests share to the server, as Supabase's gateway holds (gateway.ts). */
  connections: z.coerce.number().int().min(1).default(1000),
  faults: z.boolean().default(false),
  registerVenues: z.boolean().default(false),
  workerLife: z.coerce.number().min(10, "at least 10 seconds: a new server process takes a few to start").optional(),
  json: z.string().optional(),
  statements: z.string().optional(),
  darkShare: share.default(0.05),
  /** The fleet accounts' offline_alert_after; the database allows 60 s at least. */
  offlineSeconds: z.coerce.number().int().min(60).max(7 * 86_400).default(900),
  passSeconds: positive.default(60),
  copiedShare: share.default(0),
  churnShare: share.default(0),
  ipv6Share: share.default(0),
  seatPatterns: z.boolean().default(false),
  events: z.boolean().default(false),
}).strict();
export type RunOptions = z.infer<typeof RunOptions>;

/** The seat checks' corpus on a fast clock (seat-corpus.ts): how long, through how many instances, which draw. */
export const CorpusOptions = z.object({
  seatCorpus: z.literal(true),
  hours: positive.default(24),
  instances: z.coerce.number().int().min(1).max(16).default(3),
  seed: z.coerce.number().int().min(1).default(1),
  json: z.string().optional(),
}).strict();
export type CorpusOptions = z.infer<typeof CorpusOptions>;

/** The cost estimate's options: a fleet size, a summary to read, and the list prices. */
export const CostOptions = z.object({
  costFor: z.coerce.number().int().positive(),
  summary: z.string({ message: "required with --cost-for: the summary of a run (--json FILE), e.g. test/simulate/summaries/fleet-300-3-minutes.json" }),
  ...Object.fromEntries(Object.entries(DEFAULT_PRICES).map(([name, value]) => [name, z.coerce.number().min(0).default(value)])) as {
    [K in keyof Prices]: z.ZodDefault<z.ZodCoercedNumber>;
  },
}).strict().superRefine((options, context) => {
  if (options.utilisation <= 0 || options.utilisation > 1) context.addIssue({ code: "custom", path: ["utilisation"], message: "a share above 0, at most 1" });
  for (const name of ["vmCores", "poolPerInstance", "poolPerProcess", "peakFactor"] as const) {
    if (options[name] <= 0) context.addIssue({ code: "custom", path: [name], message: "must be above 0" });
  }
});
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
  connections: { type: "string", help: "--connections N       connections the kiosks' requests share to the server, as Supabase's gateway's (1000)" },
  faults: { type: "boolean", help: "--faults              restart the database, pause it 3 s, restart Redis, during the run" },
  json: { type: "string", help: "--json FILE           write the summary there (it is always printed)" },
  statements: { type: "string", help: "--statements FILE     write the database's 40 costliest statements there (pg_stat_statements), JSON lines" },
  "dark-share": { type: "string", help: "--dark-share S        share of kiosks that go dark (stop calling) and come back during the run (0.05)" },
  "offline-seconds": { type: "string", help: "--offline-seconds N   the fleet accounts' offline alert threshold, at least 60 (900, the default 15 minutes)" },
  "pass-seconds": { type: "string", help: "--pass-seconds S      how often the scheduled run (offline alerts, then outbox delivery) runs (60, as pg_cron)" },
  "copied-share": { type: "string", help: "--copied-share S      share of keys a second kiosk also uses, on a network of its own (0): the seat checks" },
  "churn-share": { type: "string", help: "--churn-share S       share of venues whose address changes once in the run, a DHCP renewal (0)" },
  "ipv6-share": { type: "string", help: "--ipv6-share S        share of venues on IPv6, a new privacy address in their /64 at every call (0)" },
  events: { type: "boolean", help: "--events              an endpoint receives every event of the run (standardwebhooks verifies each): requests, at once, per second" },
  "seat-patterns": { type: "boolean", help: "--seat-patterns       add a key per pattern of the seat checks' corpus (test/simulate/seat-patterns.ts), calling as it does" },
  "seat-corpus": { type: "boolean", help: "--seat-corpus         no fleet: the seat checks' corpus on a fast clock, its confusion matrix (with --hours, --instances, --seed, --json)" },
  hours: { type: "string", help: "--hours H             with --seat-corpus: simulated hours (24)" },
  instances: { type: "string", help: "--instances N         with --seat-corpus: API instances the calls are spread over (3)" },
  seed: { type: "string", help: "--seed N              with --seat-corpus: the patterns' and the instances' draw (1)" },
  "cost-for": { type: "string", help: "--cost-for N          no run: the monthly cost of N kiosks, from --summary FILE" },
  summary: { type: "string", help: "--summary FILE        a summary written by --json" },
  "register-venues": { type: "boolean", help: "--register-venues     register each venue's address for its kiosks (public.venue_addresses)" },
  "worker-life": { type: "string", help: "--worker-life S       a new server process takes over every S seconds, as Supabase's workers (150-400 s)" },
  ...Object.fromEntries(Object.entries(DEFAULT_PRICES).map(([name, value]) => {
    const flag = name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    return [flag, { type: "string", help: `--${flag} N`.padEnd(36) + ` with --cost-for (${value}; sources in test/simulate/cost.ts)` }];
  })) as Record<string, { type: "string"; help: string }>,
  help: { type: "boolean", help: "--help                this list" },
} as const;

export const USAGE = [
  "npm run simulate -- [options]        drive a simulated fleet against the production configuration",
  "npm run simulate -- --cost-for N --summary FILE [prices]   the monthly cost of N kiosks",
  "npm run simulate -- --seat-corpus [--hours 24]     the seat checks' corpus on a fast clock",
  "",
  ...Object.values(FLAGS).map((flag) => `  ${flag.help}`),
].join("\n");

export type Parsed =
  | { mode: "help" }
  | { mode: "run"; options: RunOptions }
  | { mode: "cost"; options: CostOptions }
  | { mode: "corpus"; options: CorpusOptions };

/** Reads the command line; throws with a message naming the flag when a value is wrong. */
export function parseOptions(args: string[]): Parsed {
  const options = Object.fromEntries(Object.entries(FLAGS).map(([name, { type }]) => [name, { type }]));
  const { values } = parseArgs({ args, options: options as Record<string, { type: "string" | "boolean" }>, strict: true, allowPositionals: false });
  if (values.help) return { mode: "help" };
  // parseArgs names flags in kebab-case; the schemas in camelCase.
  const camel = Object.fromEntries(Object.entries(values).map(([name, value]) => [name.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()), value]));
  const mode = values["cost-for"] !== undefined ? "cost" : values["seat-corpus"] ? "corpus" : "run";
  const schema = { run: RunOptions, cost: CostOptions, corpus: CorpusOptions }[mode];
  const parsed = schema.safeParse(camel);
  if (!parsed.success) {
    const flag = (name: PropertyKey) => `--${String(name).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    throw new Error(parsed.error.issues.map((issue) =>
      issue.code === "unrecognized_keys"
        ? `${issue.keys.map(flag).join(", ")}: not an option ${{ run: "of a run", cost: "with --cost-for", corpus: "with --seat-corpus" }[mode]}`
        : `${flag(issue.path[0] ?? "")}: ${issue.message}`
    ).join("\n"));
  }
  if (mode === "cost") return { mode, options: parsed.data as CostOptions };
  if (mode === "corpus") return { mode, options: parsed.data as CorpusOptions };
  return { mode, options: parsed.data as RunOptions };
}
