import { z } from "zod";

/** What a fleet costs per kiosk and per day: the measured per-kiosk rate, scaled to 24 hours. */
export const PerKioskDay = z.object({
  requests: z.number(),
  /** Statements the API sent through the pooler (PgBouncer's SHOW STATS total_query_count). */
  databaseStatements: z.number(),
  /** Commands Redis ran, scripts' own commands included (INFO commandstats): what Upstash bills. */
  redisCommands: z.number(),
  serverCpuSeconds: z.number(),
  databaseCpuSeconds: z.number(),
});
export type PerKioskDay = z.infer<typeof PerKioskDay>;

/**
 * The summary `npm run simulate -- --json FILE` writes (issue 26). `byStatus` counts answers per
 * status code, and requests that got none as `timeout` (no answer within the kiosk's timeout) or
 * `error` (the connection failed), so its counts sum to `requests`.
 */
export const Summary = z.object({
  kiosks: z.number().int(),
  minutes: z.number(),
  requests: z.number().int(),
  byStatus: z.record(z.string(), z.number().int()),
  unexpected: z.number().int(),
  latencyMs: z.object({ p50: z.number(), p99: z.number() }),
  changes: z.object({ made: z.number().int(), seenInTime: z.number().int() }),
  perKioskDay: PerKioskDay,
  /** The most connections seen at once: the server's to the pooler, the pooler's to Postgres. */
  peakConnections: z.object({ toPooler: z.number().int(), toDatabase: z.number().int() }),
  /** Kiosks that went dark and came back, and the offline alerts they caused (dark-kiosks.ts); absent in older summaries. */
  alerts: z.object({
    zone: z.string(),
    offlineSeconds: z.number(),
    passSeconds: z.number(),
    runs: z.number().int(),
    failedRuns: z.number().int(),
    darkKiosks: z.number().int(),
    alerted: z.number().int(),
    recovered: z.number().int(),
    alertDelayMs: z.object({ min: z.number(), max: z.number() }),
    recoveryDelayMs: z.object({ min: z.number(), max: z.number() }),
    late: z.number().int(),
    missed: z.number().int(),
    falseAlerts: z.number().int(),
    emails: z.number().int(),
  }).optional(),
});
export type Summary = z.infer<typeof Summary>;
