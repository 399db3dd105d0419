import { parseArgs } from "node:util";
import * as z from "zod";

const number = z.string().transform(Number);
const count = number.pipe(z.number().int().min(1));
const share = number.pipe(z.number().min(0).max(1));
const milliseconds = number.pipe(z.number().min(0));
const counts = z.string().transform((value, context) => {
  const numbers = value.split(",").map(Number);
  if (numbers.some((n) => !Number.isInteger(n) || n < 1)) {
    context.addIssue({ code: "custom", message: `${value}: whole numbers, at least 1, separated by commas` });
  }
  return numbers;
});

/** What `npm run bench -- --help` prints: every flag below, by the mode that reads it. */
export const BENCH_USAGE = [
  "usage: npm run bench -- [scenario name parts...] [--config=memory,redis,pooler]",
  "Drives the real entry with wrk on a throwaway Postgres, beside two bare baselines, in each configuration,",
  "then measures a cold start; prints the tables and writes them as JSON under test/bench/results/.",
  "Flags take --name value or --name=value. Other modes, one at a time:",
  "  --against <commit>[,<commit>] [--rounds N]   this tree beside those commits' servers",
  "  --workers[=1,4]                               the production start, one worker beside two (or the counts given)",
  "  --metrics [--rounds N]                        the admin listener's metrics on beside off: what they cost each route",
  "  --first-start [--rounds N]                    npm start on an empty DATA_DIR: first 200, restart, memory after the demo requests",
  "  --edits [--keys=1,1000,...] [--repeats N]     staff edits and a kiosk_status page as an account's fleet grows",
  "  --seats [--keys N] [--rounds N] [--copied S]  what the seat checks cost at fleet size",
  "  --distance [--requests N] [--delay MS]        the round trips each kiosk route waits, through a delay proxy",
  "  --help                                        this list",
  "test/README.md (The benchmark) says how to run and read each.",
].join("\n");

/** The bench's modes: flags without a value. */
const switches = {
  help: z.literal(true).optional(),
  edits: z.literal(true).optional(),
  seats: z.literal(true).optional(),
  "first-start": z.literal(true).optional(),
  distance: z.literal(true).optional(),
  metrics: z.literal(true).optional(),
};

/** Flags with a value; `--workers` may also come bare. */
const valued = {
  /** Commits to measure beside the tree, separated by commas (against.ts). */
  against: z.string().min(1).optional(),
  /** Palindromes of a side-by-side run (against.ts, metrics-cost.ts); passes of the seat checks (seat-checks.ts). */
  rounds: count.optional(),
  /** Worker counts to compare; `--workers` alone compares 1 and 2 (workers.ts). */
  workers: z.union([z.literal(true), counts]).optional(),
  /** Configurations of the main bench (configurations.ts). */
  config: z.string().optional(),
  /** Fleet sizes of the edits (schedule-edits.ts); the seat checks take one. */
  keys: counts.optional(),
  repeats: count.optional(),
  copied: share.optional(),
  requests: count.optional(),
  delay: milliseconds.optional(),
};

/**
 * Every flag `npm run bench` reads, each with its type: `--name value` and `--name=value` alike.
 * One not listed is refused, so a typo never runs another bench than the one asked for.
 */
const BenchFlags = z.strictObject({ ...switches, ...valued });

export type BenchFlags = z.infer<typeof BenchFlags> & {
  /** Parts of scenario names: only the scenarios whose name holds one of them run. */
  scenarios: string[];
};

/**
 * Reads the bench's command line with `node:util`'s `parseArgs`, then checks it against `BenchFlags`.
 *
 * @example
 * benchFlags(["--against", "327ebed", "--rounds=2", "frequencies"]);
 * // { against: "327ebed", rounds: 2, scenarios: ["frequencies"] }
 */
export function benchFlags(args: string[]): BenchFlags {
  // Not strict: `--workers` may come bare or with a value, which strict parsing refuses; the schema
  // refuses what strict parsing would have.
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: false,
    options: Object.fromEntries(Object.keys(valued).map((name) => [name, { type: "string" as const }])),
  });
  const parsed = BenchFlags.safeParse(values);
  if (!parsed.success) throw new Error(`npm run bench: ${z.prettifyError(parsed.error)}`);
  return { ...parsed.data, scenarios: positionals };
}
