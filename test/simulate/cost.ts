import type { PerKioskDay } from "./summary.ts";

/**
 * List prices, each an input (`--help` names the flags). The defaults and where they come from:
 * - `invocationPrice`, `invocationsIncluded`: $2 per 1 million Edge Function invocations beyond
 *   the 2 million a Pro or Team plan includes, billed in whole packages of 1 million
 *   (supabase.com/docs/guides/platform/manage-your-usage/edge-function-invocations, read 2026-11-24).
 * - `planFee`, `computeCredit`: the Pro plan's $25 a month, with $10 of compute credits (the same
 *   page's billing example: "Pro Plan $25", "Compute Credits -$10").
 * - `commandPrice`: Upstash Redis pay as you go, $0.20 per 100,000 commands (Upstash's pricing
 *   page, 2026, as recorded in the project's NOTES.md; every command a script runs is billed:
 *   upstash.com/docs/redis/sdks/ratelimit-ts/costs).
 * - `COMPUTE_SIZES`: below.
 * `utilisation` and `poolPerInstance` are not prices: how busy the estimate lets a core get, and
 * the pool each function instance opens (`max: 5` on SUPABASE_DB_URL, functions/app/runtime.ts).
 */
export const DEFAULT_PRICES = {
  invocationPrice: 2,
  invocationsIncluded: 2_000_000,
  commandPrice: 0.2,
  planFee: 25,
  computeCredit: 10,
  utilisation: 0.5,
  poolPerInstance: 5,
};
export type Prices = typeof DEFAULT_PRICES;

/**
 * Supabase's compute sizes: hourly price (USD), CPU cores (Micro to Medium share theirs with other
 * machines), and the pooler's recommended client connections
 * (supabase.com/docs/guides/platform/compute-add-ons, read 2026-11-24).
 */
export const COMPUTE_SIZES = [
  { name: "Micro", hourly: 0.01344, cores: 2, shared: true, poolerClients: 200 },
  { name: "Small", hourly: 0.0206, cores: 2, shared: true, poolerClients: 400 },
  { name: "Medium", hourly: 0.0822, cores: 2, shared: true, poolerClients: 600 },
  { name: "Large", hourly: 0.1517, cores: 2, shared: false, poolerClients: 800 },
  { name: "XL", hourly: 0.2877, cores: 4, shared: false, poolerClients: 1000 },
  { name: "2XL", hourly: 0.562, cores: 8, shared: false, poolerClients: 1500 },
  { name: "4XL", hourly: 1.32, cores: 16, shared: false, poolerClients: 3000 },
  { name: "8XL", hourly: 2.562, cores: 32, shared: false, poolerClients: 6000 },
  { name: "12XL", hourly: 3.836, cores: 48, shared: false, poolerClients: 9000 },
  { name: "16XL", hourly: 5.12, cores: 64, shared: false, poolerClients: 12000 },
] as const;

/** The month Supabase's own billing example counts: 744 compute hours (31 days). */
export const MONTH_DAYS = 31;

export interface MonthlyCost {
  kiosks: number;
  invocations: number;
  invocationsCost: number;
  redisCommands: number;
  redisCost: number;
  /** Cores of this machine the database used per second for the whole fleet, and for the server. */
  databaseCores: number;
  functionCores: number;
  /** Function instances at `utilisation`, each holding `poolPerInstance` pooler connections. */
  functionInstances: number;
  poolerClients: number;
  /** The smallest size whose cores (at `utilisation`) and pooler clients hold the load; undefined if none does. */
  computeSize: (typeof COMPUTE_SIZES)[number]["name"] | undefined;
  computeCost: number;
  planFee: number;
  computeCredit: number;
  total: number;
}

/**
 * What `kiosks` kiosks cost a month, from one kiosk's measured day (`perKioskDay`) and `prices`.
 *
 * @example
 * monthlyCost(100_000, summary.perKioskDay, DEFAULT_PRICES).total;
 */
export function monthlyCost(kiosks: number, perKioskDay: PerKioskDay, prices: Prices): MonthlyCost {
  const days = kiosks * MONTH_DAYS;
  // Every request is one invocation; kiosks send no preflight (OPTIONS is not billed anyway).
  const invocations = Math.round(perKioskDay.requests * days);
  const invocationsCost = Math.ceil(Math.max(0, invocations - prices.invocationsIncluded) / 1_000_000) * prices.invocationPrice;
  const redisCommands = Math.round(perKioskDay.redisCommands * days);
  const redisCost = (redisCommands / 100_000) * prices.commandPrice;
  const perSecond = kiosks / 86_400;
  const databaseCores = perKioskDay.databaseCpuSeconds * perSecond;
  const functionCores = perKioskDay.serverCpuSeconds * perSecond;
  const functionInstances = Math.max(1, Math.ceil(functionCores / prices.utilisation));
  const poolerClients = functionInstances * prices.poolPerInstance;
  const size = COMPUTE_SIZES.find((s) => s.cores * prices.utilisation >= databaseCores && s.poolerClients >= poolerClients);
  const computeCost = size ? size.hourly * 24 * MONTH_DAYS : Number.NaN;
  const computeCredit = Math.min(prices.computeCredit, computeCost);
  return {
    kiosks,
    invocations,
    invocationsCost,
    redisCommands,
    redisCost,
    databaseCores,
    functionCores,
    functionInstances,
    poolerClients,
    computeSize: size?.name,
    computeCost,
    planFee: prices.planFee,
    computeCredit,
    total: prices.planFee + invocationsCost + redisCost + computeCost - computeCredit,
  };
}
