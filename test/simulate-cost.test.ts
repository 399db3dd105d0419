import { describe, expect, it } from "vitest";
import { COMPUTE_SIZES, DEFAULT_PRICES, MONTH_DAYS, monthlyCost } from "./simulate/cost.ts";
import type { PerKioskDay } from "./simulate/summary.ts";

const day: PerKioskDay = { requests: 1440, databaseStatements: 1440, redisCommands: 2880, serverCpuSeconds: 1, databaseCpuSeconds: 1 };

describe("monthlyCost (npm run simulate -- --cost-for N)", () => {
  it("bills invocations beyond the plan's quota in whole packages of a million", () => {
    const kiosks = 100;
    const cost = monthlyCost(kiosks, day, DEFAULT_PRICES);
    expect(cost.invocations).toBe(kiosks * day.requests * MONTH_DAYS);
    const packages = Math.ceil((cost.invocations - DEFAULT_PRICES.invocationsIncluded) / 1_000_000);
    expect(cost.invocationsCost).toBe(packages * DEFAULT_PRICES.invocationPrice);
  });

  it("bills nothing for invocations within the quota", () => {
    expect(monthlyCost(1, day, DEFAULT_PRICES).invocationsCost).toBe(0);
  });

  it("bills every Redis command at the price per 100,000", () => {
    const cost = monthlyCost(1000, day, DEFAULT_PRICES);
    expect(cost.redisCost).toBeCloseTo((1000 * day.redisCommands * MONTH_DAYS / 100_000) * DEFAULT_PRICES.commandPrice, 6);
  });

  it("picks the smallest compute size whose cores, at the utilisation, hold the database's CPU", () => {
    const kiosks = 500_000;
    const cost = monthlyCost(kiosks, day, DEFAULT_PRICES);
    const needed = (kiosks * day.databaseCpuSeconds) / 86_400;
    const index = COMPUTE_SIZES.findIndex((size) => size.name === cost.computeSize);
    expect(COMPUTE_SIZES[index].cores * DEFAULT_PRICES.utilisation).toBeGreaterThanOrEqual(needed);
    expect(COMPUTE_SIZES[index - 1].cores * DEFAULT_PRICES.utilisation).toBeLessThan(needed);
  });

  it("moves to a larger size when the function instances' pooler connections need it", () => {
    const busyServer = { ...day, serverCpuSeconds: 100, databaseCpuSeconds: 0.01 };
    const cost = monthlyCost(100_000, busyServer, DEFAULT_PRICES);
    const size = COMPUTE_SIZES.find((s) => s.name === cost.computeSize)!;
    expect(cost.poolerClients).toBe(cost.functionInstances * DEFAULT_PRICES.poolPerInstance);
    expect(size.poolerClients).toBeGreaterThanOrEqual(cost.poolerClients);
    expect(COMPUTE_SIZES[COMPUTE_SIZES.indexOf(size) - 1].poolerClients).toBeLessThan(cost.poolerClients);
  });

  it("adds the plan fee and takes the compute credit off the compute", () => {
    const cost = monthlyCost(100, day, DEFAULT_PRICES);
    expect(cost.total).toBeCloseTo(DEFAULT_PRICES.planFee + cost.invocationsCost + cost.redisCost + cost.computeCost - Math.min(DEFAULT_PRICES.computeCredit, cost.computeCost), 6);
  });
});
