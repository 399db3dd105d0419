import { describe, expect, it } from "vitest";
import { COMPUTE_SIZES, computeSize, costProfiles, DEFAULT_PRICES, MONTH_DAYS, UPSTASH_FIXED_PLANS } from "./cost.ts";
import { parseOptions } from "./options.ts";
import type { PerKioskDay } from "./summary.ts";

/** A kiosk polling every 60 s: 1,440 requests, 2 commands of 60 bytes each, 300 bytes an answer. */
const day: PerKioskDay = {
  requests: 1440, databaseStatements: 1440, redisCommands: 2880, redisBytes: 2880 * 60, answerBytes: 1440 * 300,
  serverCpuSeconds: 1, databaseCpuSeconds: 1,
};
const profile = (kiosks: number, name: RegExp, prices = DEFAULT_PRICES, perDay = day) =>
  costProfiles(kiosks, perDay, prices).profiles.find((p) => name.test(p.name))!;
const line = (p: ReturnType<typeof profile>, item: RegExp) => p.lines.find((l) => item.test(l.item))!;

describe("cost profiles (npm run simulate -- --cost-for N): Edge Functions", () => {
  it("bills invocations beyond the plan's quota in whole packages of a million", () => {
    const p = profile(100, /pay as you go/);
    const invocations = 100 * day.requests * MONTH_DAYS;
    expect(line(p, /invocations/).cost).toBe(Math.ceil((invocations - DEFAULT_PRICES.invocationsIncluded) / 1e6) * DEFAULT_PRICES.invocationPrice);
    expect(line(profile(1, /pay as you go/), /invocations/).cost).toBe(0);
  });

  it("Upstash pay as you go: every command at the price per 100,000", () => {
    const p = profile(1000, /pay as you go/);
    expect(line(p, /Upstash commands/).cost).toBeCloseTo((1000 * day.redisCommands * MONTH_DAYS / 100_000) * DEFAULT_PRICES.commandPrice, 1);
  });

  it("Upstash fixed: the cheapest plan whose bandwidth and request rate hold the measured load", () => {
    const p = profile(100_000, /Upstash Fixed/);
    const gb = (100_000 * day.redisBytes * MONTH_DAYS) / 1e9;
    const plan = UPSTASH_FIXED_PLANS.find((candidate) => candidate.bandwidthGb >= gb)!;
    expect(p.name).toContain(plan.name);
    expect(p.exceeds).toEqual([]);
  });

  it("a fixed plan whose request rate the fleet exceeds is priced on paper only, with the figure that exceeds", () => {
    const p = profile(100_000, /Upstash Fixed/, { ...DEFAULT_PRICES, fixedCommandsPerSecond: 1000 });
    expect(p.exceeds).toEqual([expect.stringMatching(/^\d+ commands\/s at peak .* > 1000 allowed$/)]);
  });

  it("prices egress from the measured bytes of each answer, beyond the included GB", () => {
    const p = profile(100_000, /pay as you go/);
    const gb = (100_000 * day.answerBytes * MONTH_DAYS) / 1e9;
    expect(line(p, /egress/).cost).toBeCloseTo((gb - DEFAULT_PRICES.egressIncludedGb) * DEFAULT_PRICES.egressPrice, 1);
  });
});

describe("cost profiles: the database is sized smoothly", () => {
  it("steps through every size whose sustained cores grow: no jump from Micro to XL past one core", () => {
    const names = [0.05, 0.15, 0.5, 0.99, 1.01, 1.9, 2.1].map((cores) => computeSize(cores, 10, DEFAULT_PRICES)?.name);
    expect(names).toEqual(["Micro", "Small", "Large", "Large", "XL", "XL", "2XL"]);
  });

  it("moves to a larger size when the servers' pooler connections need it", () => {
    const size = computeSize(0.01, 700, DEFAULT_PRICES)!;
    expect(size.poolerClients).toBeGreaterThanOrEqual(700);
    expect(COMPUTE_SIZES[COMPUTE_SIZES.indexOf(size) - 1].poolerClients).toBeLessThan(700);
  });
});

describe("cost profiles: self-hosted workers behind HAProxy", () => {
  it("rents VMs for the measured server CPU and the proxy's TLS, at least two", () => {
    const p = profile(1000, /self-hosted/);
    expect(line(p, /VMs/).quantity).toMatch(/^2 for/);
    const big = profile(10_000_000, /self-hosted/);
    const serverCores = (10_000_000 * day.serverCpuSeconds) / 86_400;
    const proxyCores = ((10_000_000 * day.requests) / 86_400) * DEFAULT_PRICES.proxyCpuMsPerRequest / 1000;
    expect(Number(line(big, /VMs/).quantity.split(" ")[0])).toBe(Math.ceil((serverCores + proxyCores) / 0.5 / DEFAULT_PRICES.vmCores));
  });

  it("runs one worker per VM core, each with its own pool against the pooler", () => {
    const p = profile(10_000_000, /self-hosted/);
    const vms = Number(line(p, /VMs/).quantity.split(" ")[0]);
    expect(line(p, /database compute/).quantity).toContain(`${vms * DEFAULT_PRICES.vmCores * DEFAULT_PRICES.poolPerProcess} pooler clients`);
  });

  it("prices the TLS certificate at nothing and the proxy as CPU on the VMs", () => {
    const p = profile(100_000, /self-hosted/);
    expect(line(p, /TLS certificate/).cost).toBe(0);
    expect(line(p, /VMs/).item).toMatch(/HAProxy and \d+ workers/);
  });
});

describe("cost profiles: only what runs as priced", () => {
  it("offers no managed Redis on Edge Functions: the edge bundle has no Redis client over TCP", () => {
    expect(costProfiles(100_000, day, DEFAULT_PRICES).profiles.map((p) => p.name).filter((name) => /managed Redis/.test(name))).toEqual([]);
  });
});

describe("npm run simulate: every option combination runs or says in one line what is wrong", () => {
  it("reads a run's options", () => {
    expect(parseOptions(["--kiosks", "300", "--minutes", "1", "--per-address", "20", "--register-venues", "--worker-life", "150"])).toMatchObject({
      mode: "run",
      options: { kiosks: 300, minutes: 1, perAddress: { low: 20, high: 20 }, registerVenues: true, workerLife: 150 },
    });
  });

  it("reads the seat checks' corpus options, and a run's seat patterns", () => {
    expect(parseOptions(["--seat-corpus", "--hours", "2", "--json", "m.json"])).toEqual({
      mode: "corpus",
      options: { seatCorpus: true, hours: 2, instances: 3, seed: 1, json: "m.json" },
    });
    expect(parseOptions(["--seat-patterns", "--minutes", "20"])).toMatchObject({ mode: "run", options: { seatPatterns: true, minutes: 20 } });
  });

  it("names the flag and what is wrong", () => {
    expect(() => parseOptions(["--per-address", "0"])).toThrow(/^--per-address: a range A-B with 1 <= A <= B$/);
    expect(() => parseOptions(["--worker-life", "3"])).toThrow(/^--worker-life: at least 10 seconds/);
    expect(() => parseOptions(["--cost-for", "1000", "--summary", "x", "--kiosks", "3"])).toThrow(/^--kiosks: not an option with --cost-for$/);
    expect(() => parseOptions(["--cost-for", "1000", "--summary", "x", "--utilisation", "2"])).toThrow(/^--utilisation: a share above 0, at most 1$/);
    expect(() => parseOptions(["--bogus"])).toThrow(/bogus/);
    expect(() => parseOptions(["--hours", "2"])).toThrow(/^--hours: not an option of a run$/);
    expect(() => parseOptions(["--seat-corpus", "--kiosks", "3"])).toThrow(/^--kiosks: not an option with --seat-corpus$/);
    expect(() => parseOptions(["--seat-corpus", "--instances", "0"])).toThrow(/^--instances: /);
    expect(() => parseOptions(["--cost-for", "1000"])).toThrow(/^--summary: required with --cost-for: the summary of a run \(--json FILE\)/);
  });
});
