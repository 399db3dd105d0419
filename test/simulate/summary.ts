import { z } from "zod";
import { EventsReceived } from "./event-receiving.ts";

/** What a fleet costs per kiosk and per day: the measured per-kiosk rate, scaled to 24 hours. */
export const PerKioskDay = z.object({
  requests: z.number(),
  /** Statements the API sent through the pooler (PgBouncer's SHOW STATS total_query_count). */
  databaseStatements: z.number(),
  /** Commands Redis ran, scripts' own commands included (INFO commandstats): what Upstash bills. */
  redisCommands: z.number(),
  /** Bytes Redis read and wrote on the wire (INFO stats total_net_input_bytes + total_net_output_bytes). */
  redisBytes: z.number(),
  /** Bytes of the answers the kiosks received: status line, headers and body (kiosk.ts answerBytes). */
  answerBytes: z.number(),
  serverCpuSeconds: z.number(),
  databaseCpuSeconds: z.number(),
});
export type PerKioskDay = z.infer<typeof PerKioskDay>;

/**
 * One minute of the run (from its start; the first is the boot of the fleet): the answers to the
 * requests sent in it, per status, and the CPU seconds each part used in it, so a reader sees which
 * was the limit. The CPU was read `seconds` apart (60, or a little more when the machine was late
 * to wake the reader; less for a last part-minute), which hold `cores` x `seconds` CPU seconds;
 * `machine` counts every process, the simulation's and anyone else's on a shared machine.
 */
export const Minute = z.object({
  minute: z.number().int(),
  /** Absent in summaries written before it was recorded (one committed 20,000-kiosk run). */
  seconds: z.number().optional(),
  byStatus: z.record(z.string(), z.number().int()),
  cpuSeconds: z.object({ server: z.number(), simulator: z.number(), database: z.number(), machine: z.number() }),
});
export type Minute = z.infer<typeof Minute>;

/** Durations in ms: p50 and p99 (nearest rank), the largest, and how many were over 2 s (tally.ts). */
const Spread = z.object({ p50: z.number(), p99: z.number(), max: z.number(), overBound: z.number().int() });

/**
 * Where an answer's time went (issue 59: every request answered within 2 s). `kiosk` is what the
 * kiosk measured, send to last byte; `gateway` the part of it spent waiting for one of the gateway's
 * connections (`--connections`), the simulation's own queue; `onConnection` the rest. The loop
 * delays are the most a 100 ms timer ran late in each minute, the simulator's and the server's
 * (its metrics): a wait the simulator's loop adds is in `kiosk`, not in `server`. `server` is the
 * server's own request-duration histogram summed over its series, and the requests its admission
 * control refused.
 */
export const Wait = z.object({
  kiosk: Spread,
  gateway: Spread,
  onConnection: Spread,
  simulatorLoopDelayMs: z.array(z.number()),
  serverLoopDelayMs: z.array(z.number()),
  server: z.object({
    requests: z.number(),
    atMost: z.record(z.string(), z.number()),
    p50Within: z.string(),
    p99Within: z.string(),
    shed: z.record(z.string(), z.number()),
  }),
});

/**
 * The fleet's boot: kiosks that validated, set their name and were served their first schedule,
 * when the last did (seconds from the run's start; null if some never did), and the CPU seconds
 * each part used from the start until then.
 */
export const Boot = z.object({
  kiosks: z.number().int(),
  booted: z.number().int(),
  convergedSeconds: z.number().nullable(),
  cpuSeconds: z.object({ server: z.number(), simulator: z.number(), database: z.number(), machine: z.number() }).optional(),
});

/**
 * The summary `npm run simulate -- --json FILE` writes (issue 26). `byStatus` counts answers per
 * status code, and requests that got none as `timeout` (no answer within the kiosk's timeout) or
 * `error` (the connection failed), so its counts sum to `requests`.
 */
export const Summary = z.object({
  kiosks: z.number().int(),
  minutes: z.number(),
  pollSeconds: z.number(),
  /** `--per-address` as given: kiosks behind one venue address. */
  perAddress: z.string(),
  /** Venue addresses registered for their kiosks (`--register-venues`); 0 without. */
  registeredVenues: z.number().int(),
  /** `--worker-life`: seconds each server process lived before the next took over; null: one process all run. */
  workerLifeSeconds: z.number().nullable(),
  /** Server processes started in the run (1 without --worker-life). */
  workerStarts: z.number().int(),
  /** What the run could not judge or measure as it should, in words (a run too short, boot in the rates). */
  notes: z.array(z.string()),
  requests: z.number().int(),
  byStatus: z.record(z.string(), z.number().int()),
  /** Each route's answers per status (`license`, `system-name`, `schedule`, `legacy`); absent in older summaries. */
  byRoute: z.record(z.string(), z.record(z.string(), z.number().int())).optional(),
  /** Minute by minute, answers and CPU (`Minute`); absent in older summaries. */
  byMinute: z.array(Minute).optional(),
  /** The machine's cores (a minute of `seconds` holds cores x seconds CPU seconds); absent in older summaries. */
  cores: z.number().int().optional(),
  unexpected: z.number().int(),
  latencyMs: z.object({ p50: z.number(), p99: z.number() }),
  changes: z.object({ made: z.number().int(), seenInTime: z.number().int() }),
  perKioskDay: PerKioskDay,
  /**
   * The most connections seen at once: the server's to the pooler, the pooler's to Postgres, and the
   * kiosks' requests' to the server through the gateway's pool (`--connections`; absent in older summaries).
   */
  peakConnections: z.object({ toPooler: z.number().int(), toDatabase: z.number().int(), toServer: z.number().int().optional() }),
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
  /** What an endpoint received (`--events`, event-receiving.ts); absent without it. */
  events: EventsReceived.optional(),
  /** Where the answers' time went (`Wait`); absent in older summaries. */
  wait: Wait.optional(),
  /** The fleet's boot and when it converged (`Boot`); absent in older summaries. */
  boot: Boot.optional(),
  /** The seat checks (`--copied-share`, seats.ts): copies found, how soon after the second device started, false flags; absent in older summaries. */
  seats: z.object({
    copiedShare: z.number(),
    churnShare: z.number(),
    ipv6Share: z.number(),
    copiedKeys: z.number().int(),
    found: z.number().int(),
    detectionSeconds: z.object({ median: z.number(), max: z.number() }),
    falseFlags: z.number().int(),
    byRule: z.record(z.string(), z.number().int()),
  }).optional(),
  /** The seat checks' corpus replayed (`--seat-patterns`, seat-replay.ts): each pattern's verdict and the answers its calls got; absent in older summaries. */
  seatPatterns: z.object({
    answers: z.record(z.string(), z.record(z.string(), z.number().int())),
    verdicts: z.array(z.object({
      name: z.string(),
      kind: z.enum(["honest", "copy"]),
      keys: z.number().int(),
      flagged: z.number().int(),
      rules: z.array(z.string()),
      foundAfterMs: z.number().nullable(),
      flaggedBeforeCopy: z.boolean(),
      copyRan: z.boolean(),
      closest: z.object({ uneven: z.number(), polls: z.number(), nearness: z.number() }),
      indistinguishable: z.string().optional(),
    })),
  }).optional(),
});
export type Summary = z.infer<typeof Summary>;
