import type { PerKioskDay } from "./summary.ts";

/**
 * List prices and limits, each an input (`--help` names the flags), with where each default comes
 * from and when it was read. Where the search for a price found nothing, the default says so.
 * - `invocationPrice`, `invocationsIncluded`: $2 per 1 million Edge Function invocations beyond
 *   the 2 million a Pro or Team plan includes, billed in whole packages of 1 million
 *   (supabase.com/docs/guides/platform/manage-your-usage/edge-function-invocations, read 2026-11-25).
 * - `planFee`, `computeCredit`: the Pro plan's $25 a month, with $10 of compute credits (the same
 *   page's billing example).
 * - `egressPrice`, `egressIncludedGb`: $0.09 per GB of uncached egress beyond the 250 GB Pro
 *   includes (supabase.com/docs/guides/platform/billing-on-supabase, usage items table, read
 *   2026-11-25; every service's egress counts, Edge Functions and the pooler included:
 *   supabase.com/docs/guides/platform/manage-your-usage/egress).
 * - `commandPrice`, `upstashBandwidthIncludedGb`, `upstashBandwidthPrice`: Upstash pay as you go,
 *   $0.20 per 100,000 commands, bandwidth free to 200 GB a month then $0.03 per GB; at most 10,000
 *   commands a second (upstash.com/docs/redis/overall/billing, read 2026-11-25). Every command a
 *   script runs is billed (upstash.com/docs/redis/sdks/ratelimit-ts/costs).
 * - `UPSTASH_FIXED_PLANS`: below. `fixedCommandsPerSecond`: the fixed plans' request-rate limit;
 *   the billing page read gives 10,000 commands a second for free and pay as you go and no figure
 *   for the fixed plans, an older copy of Upstash's plan table (March 2025) gave 1,000 a second
 *   for Fixed 250MB and 1GB: 10,000 is assumed, and the README shows what 1,000 changes.
 * - `vmHourly`, `vmCores`: a rented VM for `npm start`: Hetzner cx33, 4 vCPU x86, EUR 0.011 an hour
 *   (docs.cnap.tech/compute/providers/hetzner, read 2026-11-25), taken as $0.012 at 1.08 $/EUR.
 *   `vmEgressPrice`: $0 per GB; Hetzner includes traffic with each server, but the search found
 *   no published allowance (2026-11-25): an input.
 * - `proxyCpuMsPerRequest`: what HAProxy (functions/production/haproxy.cfg) spends on a request
 *   that opens a TLS connection of its own, as a kiosk polling every minute does (the keep-alive
 *   timeout is 2 s): 0.67 ms of CPU, measured here with `openssl s_time -new` (2,689 full handshakes
 *   through it to a bare Deno.serve, ECDSA P-256 certificate, 2026-11-25, on a shared 2-core machine);
 *   a request on a kept-alive connection cost 0.025 ms. The certificate costs nothing (Let's Encrypt).
 * - `COMPUTE_SIZES`: below.
 * `utilisation`, `poolPerInstance`, `poolPerProcess`, `minVms` and `peakFactor` are not prices:
 * how busy a core may get, the pool each function instance opens (`max: 5` on SUPABASE_DB_URL) and
 * each worker of `npm run start:workers` (`max: 10` on DATABASE_URL, functions/app/runtime.ts), the
 * VMs kept for availability, and the peak request rate over the day's mean (for request-rate limits).
 */
export const DEFAULT_PRICES = {
  invocationPrice: 2,
  invocationsIncluded: 2_000_000,
  planFee: 25,
  computeCredit: 10,
  egressPrice: 0.09,
  egressIncludedGb: 250,
  commandPrice: 0.2,
  upstashBandwidthIncludedGb: 200,
  upstashBandwidthPrice: 0.03,
  paygCommandsPerSecond: 10_000,
  fixedCommandsPerSecond: 10_000,
  vmHourly: 0.012,
  vmCores: 4,
  vmEgressPrice: 0,
  proxyCpuMsPerRequest: 0.67,
  minVms: 2,
  utilisation: 0.5,
  poolPerInstance: 5,
  poolPerProcess: 10,
  peakFactor: 2,
};
export type Prices = typeof DEFAULT_PRICES;

/**
 * Upstash's fixed-price plans: monthly price and included bandwidth (upstash.com/pricing/redis,
 * as transcribed with the page's own wording by api-evangelist/upstash, read there 2026-09-20,
 * found 2026-11-25).
 */
export const UPSTASH_FIXED_PLANS = [
  { name: "Fixed 250MB", monthly: 10, bandwidthGb: 50 },
  { name: "Fixed 1GB", monthly: 20, bandwidthGb: 100 },
  { name: "Fixed 5GB", monthly: 100, bandwidthGb: 500 },
  { name: "Fixed 10GB", monthly: 200, bandwidthGb: 1_000 },
  { name: "Fixed 50GB", monthly: 400, bandwidthGb: 5_000 },
  { name: "Fixed 100GB", monthly: 800, bandwidthGb: 10_000 },
  { name: "Fixed 500GB", monthly: 1_500, bandwidthGb: 20_000 },
] as const;

/**
 * Supabase's compute sizes: hourly price (USD), cores, and the pooler's recommended client
 * connections (supabase.com/docs/guides/platform/compute-add-ons, read 2026-11-24). `sustained` is
 * the cores a size holds all day: dedicated sizes all of them; Micro to Medium share two cores, and
 * Supabase publishes no sustained share, so the AWS burstable baselines of the t4g sizes they match
 * in memory are assumed (micro 10%, small and medium 20% of each core: aws.amazon.com/ec2/instance-types/t4/,
 * as quoted in a public gist; the search found no Supabase figure, 2026-11-25). Each size then holds
 * more than the one before it, and the estimate steps through them one by one instead of jumping
 * from Micro to XL when the database passes one core.
 */
export const COMPUTE_SIZES = [
  { name: "Micro", hourly: 0.01344, cores: 2, sustained: 0.2, poolerClients: 200 },
  { name: "Small", hourly: 0.0206, cores: 2, sustained: 0.4, poolerClients: 400 },
  { name: "Medium", hourly: 0.0822, cores: 2, sustained: 0.4, poolerClients: 600 },
  { name: "Large", hourly: 0.1517, cores: 2, sustained: 2, poolerClients: 800 },
  { name: "XL", hourly: 0.2877, cores: 4, sustained: 4, poolerClients: 1000 },
  { name: "2XL", hourly: 0.562, cores: 8, sustained: 8, poolerClients: 1500 },
  { name: "4XL", hourly: 1.32, cores: 16, sustained: 16, poolerClients: 3000 },
  { name: "8XL", hourly: 2.562, cores: 32, sustained: 32, poolerClients: 6000 },
  { name: "12XL", hourly: 3.836, cores: 48, sustained: 48, poolerClients: 9000 },
  { name: "16XL", hourly: 5.12, cores: 64, sustained: 64, poolerClients: 12000 },
] as const;

/** The month Supabase's own billing example counts: 744 compute hours (31 days). */
export const MONTH_DAYS = 31;
const HOURS = 24 * MONTH_DAYS;

/** One line of a profile's bill. */
export interface Line {
  item: string;
  quantity: string;
  cost: number;
}

/** One way to run the fleet, priced. */
export interface Profile {
  name: string;
  /** Runs on Supabase's own Edge Functions. */
  onEdgeFunctions: boolean;
  lines: Line[];
  total: number;
  perKioskMonth: number;
  /** Limits the load exceeds, each with the figure that exceeds: the total is then a price on paper only. */
  exceeds: string[];
  /** What the figure assumes that was not measured. */
  caveats: string[];
}

/** The fleet's monthly load, from one kiosk's measured day. */
export interface Load {
  kiosks: number;
  requests: number;
  redisCommands: number;
  redisGb: number;
  answerGb: number;
  /** Mean commands per second over the month, and at `peakFactor`. */
  commandsPerSecond: number;
  peakCommandsPerSecond: number;
  databaseCores: number;
  serverCores: number;
}

export function monthlyLoad(kiosks: number, day: PerKioskDay, prices: Prices): Load {
  const days = kiosks * MONTH_DAYS;
  const redisCommands = day.redisCommands * days;
  const commandsPerSecond = (day.redisCommands * kiosks) / 86_400;
  return {
    kiosks,
    requests: Math.round(day.requests * days),
    redisCommands: Math.round(redisCommands),
    redisGb: (day.redisBytes * days) / 1e9,
    answerGb: (day.answerBytes * days) / 1e9,
    commandsPerSecond,
    peakCommandsPerSecond: commandsPerSecond * prices.peakFactor,
    databaseCores: (day.databaseCpuSeconds * kiosks) / 86_400,
    serverCores: (day.serverCpuSeconds * kiosks) / 86_400,
  };
}

/** The smallest compute size whose sustained cores (at `utilisation`) and pooler clients hold the load. */
export function computeSize(databaseCores: number, poolerClients: number, prices: Prices) {
  return COMPUTE_SIZES.find((s) => s.sustained * prices.utilisation >= databaseCores && s.poolerClients >= poolerClients);
}

const money = (n: number) => Math.round(n * 100) / 100;
const round = (n: number, digits = 2) => Number(n.toFixed(digits));

function supabaseLines(load: Load, prices: Prices, poolerClients: number, egressGb: number): { lines: Line[]; exceeds: string[] } {
  const size = computeSize(load.databaseCores, poolerClients, prices);
  const exceeds = size ? [] : [`database: ${round(load.databaseCores)} cores and ${poolerClients} pooler clients fit no compute size`];
  const compute = size ? size.hourly * HOURS : COMPUTE_SIZES[COMPUTE_SIZES.length - 1].hourly * HOURS;
  const egressCost = Math.max(0, egressGb - prices.egressIncludedGb) * prices.egressPrice;
  return {
    exceeds,
    lines: [
      { item: "Supabase Pro plan", quantity: "1", cost: prices.planFee },
      { item: `database compute ${size?.name ?? "none fits"}`, quantity: `${round(load.databaseCores)} cores used, ${poolerClients} pooler clients`, cost: money(compute) },
      { item: "compute credit", quantity: "1", cost: -Math.min(prices.computeCredit, compute) },
      { item: "Supabase egress", quantity: `${round(egressGb, 1)} GB`, cost: money(egressCost) },
    ],
  };
}

function edgeProfile(name: string, load: Load, prices: Prices, redis: { lines: Line[]; exceeds: string[]; caveats: string[] }): Profile {
  const invocationsCost = Math.ceil(Math.max(0, load.requests - prices.invocationsIncluded) / 1_000_000) * prices.invocationPrice;
  const instances = Math.max(1, Math.ceil(load.serverCores / prices.utilisation));
  const supabase = supabaseLines(load, prices, instances * prices.poolPerInstance, load.answerGb);
  const lines = [
    { item: "Edge Function invocations", quantity: `${(load.requests / 1e6).toFixed(1)} million`, cost: invocationsCost },
    ...supabase.lines,
    ...redis.lines,
  ];
  const total = money(lines.reduce((sum, line) => sum + line.cost, 0));
  return {
    name, onEdgeFunctions: true, lines, total, perKioskMonth: round(total / load.kiosks, 4),
    exceeds: [...supabase.exceeds, ...redis.exceeds], caveats: redis.caveats,
  };
}

/**
 * Every way to run `kiosks` kiosks, priced from one kiosk's measured day, cheapest first:
 * Edge Functions with Upstash pay as you go, with Upstash's cheapest fixed plan whose limits hold
 * the load (or, if none does, the largest, flagged); and `npm run start:workers` self-hosted behind
 * HAProxy on rented VMs next to Supabase Postgres. A plain managed Redis on Edge Functions is not
 * priced: the edge bundle carries no Redis client over TCP (rate-limit/plain-redis.ts is imported
 * only off the edge), so that profile could not run as priced. Every profile pays Supabase for the plan,
 * the database (sized from the measured database CPU and the pooler clients the servers hold) and
 * egress (the measured bytes of each answer).
 *
 * @example
 * costProfiles(100_000, summary.perKioskDay, DEFAULT_PRICES)[0].perKioskMonth;
 */
export function costProfiles(kiosks: number, day: PerKioskDay, prices: Prices): { load: Load; profiles: Profile[] } {
  const load = monthlyLoad(kiosks, day, prices);
  const perSecond = `${Math.round(load.peakCommandsPerSecond)} commands/s at peak (${Math.round(load.commandsPerSecond)} mean x ${prices.peakFactor})`;

  const paygBandwidth = Math.max(0, load.redisGb - prices.upstashBandwidthIncludedGb) * prices.upstashBandwidthPrice;
  const payg = edgeProfile("Edge Functions + Upstash pay as you go", load, prices, {
    lines: [
      { item: "Upstash commands", quantity: `${(load.redisCommands / 1e6).toFixed(1)} million`, cost: money((load.redisCommands / 100_000) * prices.commandPrice) },
      { item: "Upstash bandwidth", quantity: `${round(load.redisGb, 1)} GB`, cost: money(paygBandwidth) },
    ],
    exceeds: load.peakCommandsPerSecond > prices.paygCommandsPerSecond ? [`${perSecond} > ${prices.paygCommandsPerSecond} allowed`] : [],
    caveats: ["Redis bytes are measured on the RESP wire; Upstash's REST calls add HTTP framing"],
  });

  const fits = (plan: (typeof UPSTASH_FIXED_PLANS)[number]) => plan.bandwidthGb >= load.redisGb && prices.fixedCommandsPerSecond >= load.peakCommandsPerSecond;
  const plan = UPSTASH_FIXED_PLANS.find(fits) ?? UPSTASH_FIXED_PLANS[UPSTASH_FIXED_PLANS.length - 1];
  const fixedExceeds = [];
  if (plan.bandwidthGb < load.redisGb) fixedExceeds.push(`${round(load.redisGb, 1)} GB of Redis traffic > ${plan.name}'s ${plan.bandwidthGb} GB`);
  if (prices.fixedCommandsPerSecond < load.peakCommandsPerSecond) fixedExceeds.push(`${perSecond} > ${prices.fixedCommandsPerSecond} allowed`);
  const fixed = edgeProfile(`Edge Functions + Upstash ${plan.name}`, load, prices, {
    lines: [{ item: `Upstash ${plan.name}`, quantity: `${round(load.redisGb, 1)} GB of ${plan.bandwidthGb} GB; ${perSecond}`, cost: plan.monthly }],
    exceeds: fixedExceeds,
    caveats: [`fixed plans' request rate assumed ${prices.fixedCommandsPerSecond}/s (--fixed-commands-per-second)`, "Redis bytes are measured on the RESP wire; Upstash's REST calls add HTTP framing"],
  });

  // Self-hosted: `npm run start:workers` on each VM, one worker per core, behind HAProxy on the same
  // VM, which terminates TLS; redis-server on one of them. The VMs hold the workers' measured CPU
  // and the proxy's, at `utilisation`.
  const seconds = HOURS * 3600;
  const proxyCores = ((load.requests / seconds) * prices.proxyCpuMsPerRequest) / 1000;
  const vms = Math.max(prices.minVms, Math.ceil((load.serverCores + proxyCores) / prices.utilisation / prices.vmCores));
  const workers = vms * prices.vmCores;
  const supabase = supabaseLines(load, prices, workers * prices.poolPerProcess, load.answerGb);
  const selfLines = [
    {
      item: `VMs (${prices.vmCores} cores each: HAProxy and ${prices.vmCores} workers)`,
      quantity: `${vms} for ${round(load.serverCores)} server cores measured and ${round(proxyCores)} proxy cores (TLS)`,
      cost: money(vms * prices.vmHourly * HOURS),
    },
    { item: "TLS certificate (Let's Encrypt)", quantity: `${vms} VMs`, cost: 0 },
    { item: "VM egress", quantity: `${round(load.answerGb, 1)} GB`, cost: money(load.answerGb * prices.vmEgressPrice) },
    ...supabase.lines,
  ];
  const selfTotal = money(selfLines.reduce((sum, line) => sum + line.cost, 0));
  const selfHosted: Profile = {
    name: "self-hosted workers behind HAProxy on VMs + Supabase Postgres",
    onEdgeFunctions: false,
    lines: selfLines,
    total: selfTotal,
    perKioskMonth: round(selfTotal / kiosks, 4),
    exceeds: supabase.exceeds,
    caveats: [
      "Supabase egress here is the pooler's answers to the servers, taken as the answers' bytes",
      "the server cores were measured on one npm start process; workers add no CPU per request (npm run bench -- --workers)",
      `the proxy's CPU assumes every request opens a TLS connection of its own (${prices.proxyCpuMsPerRequest} ms, --proxy-cpu-ms-per-request)`,
      "redis-server runs on one of the VMs (its CPU is small beside the server's); the VMs share the traffic by DNS, no load balancer priced",
    ],
  };

  const profiles = [payg, fixed, selfHosted].sort((a, b) => a.total - b.total);
  return { load, profiles };
}
