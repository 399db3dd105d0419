// The seat checks' corpus (issue 51): named patterns of how kiosks really call, honest and copied,
// as timelines of answered calls. The fast-clock player (seat-corpus.ts) plays them for a day through
// the sightings writer and the database; the fleet simulation (seat-replay.ts) sends them over HTTP
// in real time; the tests play the fast ones. supabase/README.md ("Seat checks") says which copies
// no rule can tell from an honest pattern, and why.

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The calls a kiosk makes: a start is a validation, a system-name write and a first read of each. */
export type KioskRoute = "license" | "system-name" | "schedule" | "proclamations";

/** One call a kiosk makes: when (ms into the run), with which of its pattern's keys, from which address. */
export interface PatternCall {
  at: number;
  /** Index into the pattern's keys. */
  key: number;
  /** Which device of the pattern made it. */
  device: number;
  ip: string;
  route: KioskRoute;
}

/** Where a device's call leaves from, given when (ms into the run) and a random draw. */
type Address = (at: number, random: () => number) => string;

/** One kiosk (a device) running a key. */
interface Device {
  key: number;
  address: Address;
  /** Its poll interval: 60 s unless configured otherwise. */
  pollMs?: number;
  /** Each interval drawn within this share either way (the simulator's kiosks: 0.1), or a timer that never drifts. */
  timer?: { jitter: number } | "steady";
  /** Reads its schedule only (an older kiosk), not its proclamations too. */
  scheduleOnly?: boolean;
  /** Runs from (ms into the run: it starts then, to the millisecond; unset, within its first 50 s), until. */
  from?: number;
  until?: number;
  /** On only these hours of each day (the run starts at midnight): it starts each morning, stops each evening. */
  hours?: [number, number];
  /** Crashes and restarts after a time drawn from this range (ms), again and again. */
  crashEvery?: [number, number];
  /** Share of polls whose calls all fail (a flaky link): nothing is recorded for them. */
  lostShare?: number;
  /** Between the calls of one poll, at most this long (ms; 900 unless told). */
  spreadMs?: number;
  /**
   * Starts `offsetMs` after the first poll of device number `device` at or after its `from`: a copy
   * started in step with the original, so its polls come that far after the original's at first
   * (each timer's jitter then moves them).
   */
  inStep?: { device: number; offsetMs: number };
}

export interface SeatPattern {
  name: string;
  kind: "honest" | "copy";
  /** Keys the pattern uses: one, but for a venue of many kiosks. */
  keys: number;
  /** For a copy: when its (first) second device starts, ms into a run of `runMs`; time to find is counted from it. */
  copyFrom?: (runMs: number) => number;
  /** A copy no rule can tell from an honest pattern without a client change, and why (supabase/README.md's table). */
  indistinguishable?: string;
  /** A venue address its kiosks share (the fleet simulation registers it, so the rate limits count them all). */
  venue?: { address: string; kiosks: number };
  /** Its devices in a run of `runMs`; `n` numbers the pattern (its addresses are its own). */
  devices(n: number, runMs: number, random: () => number): Device[];
}

/** A deterministic random source (mulberry32), so a pattern's timeline is the same at every run with one seed. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const hex = (n: number) => Math.floor(n).toString(16);
/** Pattern n's own addresses: a venue's IPv4 (198.18.n.h), another network's (198.19.n.h), its IPv6 /64s (2001:db8:n:s::/64). */
const venueV4 = (n: number, host = 1) => `198.18.${n}.${host}`;
const otherV4 = (n: number, host = 1) => `198.19.${n}.${host}`;
/** A privacy address in /64 number `subnet` of pattern n: a new one at each call, as IPv6 privacy extensions rotate. */
const privacyV6 = (n: number, subnet: number, random: () => number) =>
  `2001:db8:${hex(n)}:${hex(subnet)}:${hex(random() * 0x10000)}:${hex(random() * 0x10000)}:${hex(random() * 0x10000)}:${hex(1 + random() * 0xfffe)}`;
/** A carrier's pool of pattern n: four /24s of 100.64.0.0/10 (shared address space), any host. */
const carrierPool = (n: number, random: () => number) => `100.${64 + ((n >> 6) & 63)}.${((n & 63) << 2) + Math.floor(random() * 4)}.${1 + Math.floor(random() * 254)}`;

const fixed = (ip: string): Address => () => ip;
/** From this address until `at`, then that one. */
const until = (at: number, before: Address, after: Address): Address => (t, random) => (t < at ? before(t, random) : after(t, random));
/** Each call (each connection) through one of two WAN links, balanced per connection. */
const perConnection = (a: string, b: string): Address => (_, random) => (random() < 0.5 ? a : b);
/** Happy eyeballs: each call on the family that connected first, IPv4 or a privacy address of the venue's /64. */
const happyEyeballs = (n: number, v4: string): Address => (_, random) => (random() < 0.5 ? v4 : privacyV6(n, 1, random));
/** Two WAN links balanced round-robin: each call (each connection) through the other link than the call before. */
const roundRobin = (a: string, b: string): Address => {
  let calls = 0;
  return () => (calls++ % 2 === 0 ? a : b);
};
/** A device on IPv6 only: a new privacy address of its /64 at each call, the /64 its own. */
const onlyV6 = (n: number, subnet: number): Address => (_, random) => privacyV6(n, subnet, random);
/** A mobile carrier's pool: each connection from any address of it. */
const pooled = (n: number): Address => (_, random) => carrierPool(n, random);
/** A carrier-grade NAT that keeps a mapping for minutes: a new pool address every `holdMs`. */
const sticky = (n: number, holdMs: number): Address => (t) => carrierPool(n, seeded(n * 100_003 + Math.floor(t / holdMs)));
/** DHCP renewals: a new address of the venue's provider every `everyMs`. */
const renewed = (n: number, everyMs: number): Address => (t) => venueV4(n, 1 + (Math.floor(t / everyMs) % 250));

/** When a copy's second device starts: two hours in, once the first's polls are settled, or a quarter into a shorter run. */
const copyStart = (runMs: number) => Math.min(2 * HOUR, runMs / 4);
/** Two devices on one key. */
const copied = (first: Omit<Device, "key">, second: Omit<Device, "key">, runMs: number): Device[] => [
  { key: 0, ...first },
  { key: 0, from: copyStart(runMs) + 13 * SECOND, ...second },
];

/**
 * The corpus: honest patterns first (each must raise no flag in a day), then copies (each must be found, or be one the docs
 * name); then issue 60's, the same way.
 */
export const SEAT_PATTERNS: SeatPattern[] = [
  { name: "one kiosk", kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: fixed(venueV4(n)) }] },
  {
    name: "two WAN links balanced per connection",
    kind: "honest",
    keys: 1,
    devices: (n) => [{ key: 0, address: perConnection(venueV4(n), otherV4(n)) }],
  },
  { name: "happy eyeballs: the family chosen per call", kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: happyEyeballs(n, venueV4(n)) }] },
  { name: "mobile carrier's pool, polling every 30 s", kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: pooled(n), pollMs: 30 * SECOND }] },
  { name: "CGNAT mapping kept 5 minutes, polling every 30 s", kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: sticky(n, 5 * MINUTE), pollMs: 30 * SECOND }] },
  { name: "DHCP renewal every 4 hours", kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: renewed(n, 4 * HOUR) }] },
  {
    name: "failover to a mobile link for 20 minutes, and back",
    kind: "honest",
    keys: 1,
    devices: (n, runMs) => [{ key: 0, address: until(runMs / 3, fixed(venueV4(n)), until(runMs / 3 + 20 * MINUTE, pooled(n), fixed(venueV4(n)))) }],
  },
  { name: "crash loop every 110 s", kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: fixed(venueV4(n)), crashEvery: [110 * SECOND, 110 * SECOND] }] },
  { name: "crash loop every 1-2 minutes", kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: fixed(venueV4(n)), crashEvery: [MINUTE, 2 * MINUTE] }] },
  { name: "configured to poll every 30 s", kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: fixed(venueV4(n)), pollMs: 30 * SECOND }] },
  {
    name: "50 kiosks behind one NAT",
    kind: "honest",
    keys: 50,
    venue: { address: "198.18.255.1", kiosks: 50 },
    devices: () => Array.from({ length: 50 }, (_, key) => ({ key, address: fixed("198.18.255.1") })),
  },
  {
    name: "venue moves to a new provider (and gains IPv6)",
    kind: "honest",
    keys: 1,
    devices: (n, runMs) => [{ key: 0, address: until(runMs / 2, fixed(venueV4(n)), happyEyeballs(n, otherV4(n))) }],
  },
  // What a real fleet also shows.
  { name: "flaky link: a fifth of polls lost", kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: fixed(venueV4(n)), lostShare: 0.2 }] },
  { name: "flaky link polling every 30 s: a third lost", kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: pooled(n), pollMs: 30 * SECOND, lostShare: 1 / 3 }] },
  { name: "steady timer (setInterval)", kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: fixed(venueV4(n)), timer: "steady" }] },
  {
    name: "steady timer, crash loop every 1-2 minutes",
    kind: "honest",
    keys: 1,
    devices: (n) => [{ key: 0, address: fixed(venueV4(n)), timer: "steady", crashEvery: [MINUTE, 2 * MINUTE] }],
  },
  { name: "jitter of 25 %", kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: fixed(venueV4(n)), timer: { jitter: 0.25 } }] },
  { name: "an older kiosk reading its schedule only", kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: fixed(venueV4(n)), scheduleOnly: true }] },
  { name: "a slow link: a poll's calls up to 4 s apart", kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: pooled(n), spreadMs: 4 * SECOND }] },
  { name: "switched off at night (07:00-22:00)", kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: renewed(n, 24 * HOUR), hours: [7, 22] }] },
  {
    name: "reconfigured from 60 s to 30 s",
    kind: "honest",
    keys: 1,
    devices: (n, runMs) => [{ key: 0, address: fixed(venueV4(n)), until: runMs / 2 }, { key: 0, address: fixed(venueV4(n)), pollMs: 30 * SECOND, from: runMs / 2 + 20 * SECOND }],
  },
  {
    name: "hardware replaced: a new device on the same key",
    kind: "honest",
    keys: 1,
    devices: (n, runMs) => [{ key: 0, address: fixed(venueV4(n)), until: runMs / 2 }, { key: 0, address: happyEyeballs(n, otherV4(n)), from: runMs / 2 + 5 * MINUTE }],
  },
  { name: "copy on another network, 60 s", kind: "copy", keys: 1, copyFrom: copyStart, devices: (n, runMs) => copied({ address: fixed(venueV4(n)) }, { address: fixed(otherV4(n)) }, runMs) },
  {
    name: "copy on another network, 95 s",
    kind: "copy",
    keys: 1,
    copyFrom: copyStart,
    devices: (n, runMs) => copied({ address: fixed(venueV4(n)) }, { address: fixed(otherV4(n)), pollMs: 95 * SECOND }, runMs),
  },
  {
    name: "copy on another network, 5 minutes",
    kind: "copy",
    keys: 1,
    copyFrom: copyStart,
    devices: (n, runMs) => copied({ address: fixed(venueV4(n)) }, { address: fixed(otherV4(n)), pollMs: 5 * MINUTE }, runMs),
  },
  { name: "copy behind the same NAT", kind: "copy", keys: 1, copyFrom: copyStart, devices: (n, runMs) => copied({ address: fixed(venueV4(n)) }, { address: fixed(venueV4(n)) }, runMs) },
  {
    name: "copy on the other address family",
    kind: "copy",
    keys: 1,
    copyFrom: copyStart,
    devices: (n, runMs) => copied({ address: (_, random) => privacyV6(n, 1, random) }, { address: fixed(otherV4(n)) }, runMs),
  },
  {
    name: "two copies of one key",
    kind: "copy",
    keys: 1,
    copyFrom: copyStart,
    devices: (n, runMs) => [
      ...copied({ address: fixed(venueV4(n)) }, { address: fixed(otherV4(n)) }, runMs),
      { key: 0, address: pooled(n), from: copyStart(runMs) + 7 * MINUTE },
    ],
  },
  {
    name: "copy running during business hours (09:00-17:00)",
    kind: "copy",
    keys: 1,
    copyFrom: (runMs) => (runMs > 9 * HOUR ? 9 * HOUR : runMs),
    devices: (n) => [{ key: 0, address: fixed(venueV4(n)) }, { key: 0, address: fixed(otherV4(n)), hours: [9, 17] }],
  },
  // What a real fleet also shows.
  {
    name: "copy behind a mobile carrier's pool",
    kind: "copy",
    keys: 1,
    copyFrom: copyStart,
    devices: (n, runMs) => copied({ address: happyEyeballs(n, venueV4(n)) }, { address: pooled(n) }, runMs),
  },
  {
    name: "copy of a kiosk polling every 30 s",
    kind: "copy",
    keys: 1,
    copyFrom: copyStart,
    devices: (n, runMs) => copied({ address: fixed(venueV4(n)), pollMs: 30 * SECOND }, { address: fixed(otherV4(n)), pollMs: 30 * SECOND }, runMs),
  },
  {
    name: "copy with steady timers, 22 s after the original",
    kind: "copy",
    keys: 1,
    copyFrom: copyStart,
    devices: (n, runMs) => [
      { key: 0, address: fixed(venueV4(n)), timer: "steady", from: 0 },
      { key: 0, address: fixed(otherV4(n)), timer: "steady", from: copyStart(runMs) + 22 * SECOND },
    ],
  },
  {
    name: "copy with steady timers, half a period apart",
    kind: "copy",
    keys: 1,
    copyFrom: copyStart,
    indistinguishable: "one kiosk polling every 30 s: two steady timers half a period apart make the same polls",
    devices: (n, runMs) => [
      { key: 0, address: fixed(venueV4(n)), timer: "steady", from: 0 },
      { key: 0, address: fixed(otherV4(n)), timer: "steady", from: copyStart(runMs) + 30 * SECOND },
    ],
  },
  {
    name: "copy running only while the original is off",
    kind: "copy",
    keys: 1,
    copyFrom: (runMs) => runMs / 2,
    indistinguishable: "hardware replaced: one device at a time on the key",
    devices: (n, runMs) => [
      { key: 0, address: fixed(venueV4(n)), until: runMs / 2 },
      { key: 0, address: fixed(otherV4(n)), from: runMs / 2, until: (3 * runMs) / 4 },
      { key: 0, address: fixed(venueV4(n)), from: (3 * runMs) / 4 + MINUTE },
    ],
  },
  // Issue 60's patterns follow the earlier ones, so that those keep their numbers, and so their draws.
  // How honest venues change addresses (issue 60), each at both usual intervals.
  ...[30 * SECOND, 60 * SECOND].flatMap((pollMs): SeatPattern[] => {
    const every = `every ${pollMs / SECOND} s`;
    return [
      {
        name: `dual WAN alternating per call, ${every}`,
        kind: "honest",
        keys: 1,
        devices: (n) => [{ key: 0, address: roundRobin(venueV4(n), otherV4(n)), pollMs }],
      },
      {
        name: `dual WAN round-robin across polls (one call a poll), ${every}`,
        kind: "honest",
        keys: 1,
        devices: (n) => [{ key: 0, address: roundRobin(venueV4(n), venueV4(n, 2)), pollMs, scheduleOnly: true }],
      },
      { name: `carrier pool picking per connection, ${every}`, kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: pooled(n), pollMs }] },
      { name: `dual stack per call, ${every}`, kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: happyEyeballs(n, venueV4(n)), pollMs }] },
      {
        name: `watchdog restart every 2 minutes, ${every}`,
        kind: "honest",
        keys: 1,
        devices: (n) => [{ key: 0, address: fixed(venueV4(n)), pollMs, crashEvery: [2 * MINUTE, 2 * MINUTE] }],
      },
      {
        name: `five kiosks behind one NAT, ${every}`,
        kind: "honest",
        keys: 5,
        devices: (n) => Array.from({ length: 5 }, (_, key) => ({ key, address: fixed(venueV4(n)), pollMs })),
      },
      { name: `DHCP address changing once an hour, ${every}`, kind: "honest", keys: 1, devices: (n) => [{ key: 0, address: renewed(n, HOUR), pollMs }] },
    ];
  }),

  // The copy any owner meets first (issue 60): a second device polling in step with the original,
  // each every 60 s with the usual jitter, started this long after one of the original's polls.
  ...[0, 5, 15, 30].flatMap((offset): SeatPattern[] => {
    const inStep = (runMs: number, original: Address, copy: Address): Device[] => [
      { key: 0, address: original },
      { key: 0, address: copy, from: copyStart(runMs), inStep: { device: 0, offsetMs: offset * SECOND } },
    ];
    return [
      {
        name: `copy in step ${offset} s after, on another network`,
        kind: "copy",
        keys: 1,
        copyFrom: copyStart,
        devices: (n, runMs) => inStep(runMs, fixed(venueV4(n)), fixed(otherV4(n))),
      },
      {
        name: `copy in step ${offset} s after, in the same /24`,
        kind: "copy",
        keys: 1,
        copyFrom: copyStart,
        devices: (n, runMs) => inStep(runMs, fixed(venueV4(n)), fixed(venueV4(n, 2))),
      },
      {
        name: `copy in step ${offset} s after, in the other address family`,
        kind: "copy",
        keys: 1,
        copyFrom: copyStart,
        devices: (n, runMs) => inStep(runMs, fixed(venueV4(n)), onlyV6(n, 2)),
      },
    ];
  }),
];

/** Whether `at` falls within `hours` of its day (the run starts at midnight). */
const within = (hours: [number, number], at: number) => {
  const hour = (at % (24 * HOUR)) / HOUR;
  return hour >= hours[0] && hour < hours[1];
};

/** The spans a device is on within [0, runMs): its from-until, cut to its hours of each day. */
function sessions(device: Device, runMs: number): Array<[number, number]> {
  const from = device.from ?? 0;
  const to = Math.min(device.until ?? runMs, runMs);
  if (!device.hours) return from < to ? [[from, to]] : [];
  const spans: Array<[number, number]> = [];
  for (let day = 0; day * 24 * HOUR < to; day++) {
    const start = Math.max(from, day * 24 * HOUR + device.hours[0] * HOUR);
    const end = Math.min(to, day * 24 * HOUR + device.hours[1] * HOUR);
    if (start < end && within(device.hours, start)) spans.push([start, end]);
  }
  return spans;
}

/**
 * Every answered call of pattern number `n` in a run of `runMs`, in time order. Each device starts
 * (validation, system-name write, a read of its schedule and of its proclamations, a second or so
 * apart), then polls (its schedule, then its proclamations) every interval: jittered, or on a
 * steady timer (each answer 50-400 ms after its tick, no drift but 20 ppm of clock); a crash loop
 * restarts 3-10 s after each crash.
 */
export function patternTimeline(pattern: SeatPattern, n: number, runMs: number, seed = 1): PatternCall[] {
  const random = seeded(seed * 7_919 + n);
  const calls: PatternCall[] = [];
  /** Each device's poll moments so far, for a device started in step with it. */
  const pollsOf: number[][] = [];
  pattern.devices(n, runMs, random).forEach((device, index) => {
    pollsOf[index] = [];
    if (device.inStep) {
      const from = device.from ?? 0;
      const original = pollsOf[device.inStep.device].find((at) => at >= from) ?? runMs;
      device = { ...device, from: original + device.inStep.offsetMs };
    }
    const pollMs = device.pollMs ?? 60 * SECOND;
    const timer = device.timer ?? { jitter: 0.1 };
    const spread = device.spreadMs ?? 900;
    const emit = (at: number, routes: KioskRoute[]) => {
      let t = at;
      for (const route of routes) {
        calls.push({ at: Math.round(t), key: device.key, device: index, ip: device.address(t, random), route });
        t += 100 + random() * (spread - 100);
      }
    };
    const poll: KioskRoute[] = device.scheduleOnly ? ["schedule"] : ["schedule", "proclamations"];
    const skew = 1 + (random() - 0.5) * 40e-6;
    for (const [on, off] of sessions(device, runMs)) {
      // Switched on in the morning within ten minutes; a device given no start, within its pattern's first 50 s.
      let started = on + (device.hours ? random() * 10 * MINUTE : device.from === undefined ? random() * 50 * SECOND : 0);
      while (started < off) {
        const crash = device.crashEvery ? started + device.crashEvery[0] + random() * (device.crashEvery[1] - device.crashEvery[0]) : Infinity;
        const end = Math.min(crash, off);
        emit(started, ["license", "system-name", ...poll]);
        for (let tick = 1, at = started; ; tick++) {
          at = timer === "steady" ? started + tick * pollMs * skew + 50 + random() * 350 : at + pollMs * (1 + timer.jitter * (2 * random() - 1));
          if (at >= end) break;
          if (random() >= (device.lostShare ?? 0)) {
            pollsOf[index].push(at);
            emit(at, poll);
          }
        }
        started = crash + 3 * SECOND + random() * 7 * SECOND;
      }
    }
  });
  return calls.filter((call) => call.at < runMs).sort((a, b) => a.at - b.at);
}
