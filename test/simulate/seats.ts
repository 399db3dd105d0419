import type postgres from "postgres";
import type { Kiosk } from "./fleet.ts";

/** How the honest venues' addresses move, and which keys a second device copies (issue 42). */
export interface SeatPlan {
  /** Share of keys a second kiosk uses, each copy on a network of its own. */
  copiedShare: number;
  /** Share of venues whose IPv4 address changes once during the run (a DHCP renewal). */
  churnShare: number;
  /** Share of venues on IPv6 with privacy addresses: a new address inside the venue's /64 at every call. */
  ipv6Share: number;
}

/** A second device running a copied key, and when it starts (ms into the run). */
export interface Copy {
  kiosk: Kiosk;
  bootAt: number;
}

/** Whether item `n` is one of an evenly spread `share` of items, shifted by `offset` so two shares pick different items. */
const inShare = (n: number, share: number, offset = 0) => Math.floor((n + 1 + offset) * share) > Math.floor((n + offset) * share);
const hex = (n: number) => n.toString(16);
const randomGroup = () => hex(Math.floor(Math.random() * 0x10000));

/**
 * The address a kiosk calls from at `at` (ms into the run): its venue's, or after its venue's
 * renewal the new one, or a fresh privacy address inside its venue's /64.
 */
export function addressAt(kiosk: Kiosk, at: number): string {
  const moves = kiosk.moves;
  if (!moves) return kiosk.address;
  if (moves.kind === "privacy") return `${moves.prefix}:${randomGroup()}:${randomGroup()}:${randomGroup()}:${randomGroup()}`;
  return at >= moves.at ? moves.to : kiosk.address;
}

/**
 * Gives `plan.churnShare` of the venues a renewal at a random moment of the run (to an address in
 * 11.0.0.0/8) and `plan.ipv6Share` of the others privacy addresses (in fd00::/16); then picks
 * `plan.copiedShare` of the keys for a second device on its own address (in 12.0.0.0/8), started
 * at a random moment between `bootMs` and half the run.
 */
export function planSeats(fleet: Kiosk[], plan: SeatPlan, runMs: number, bootMs: number): { fleet: Kiosk[]; copies: Copy[] } {
  const venues = [...new Set(fleet.map((kiosk) => kiosk.address))];
  const moves = new Map<string, Kiosk["moves"]>();
  venues.forEach((address, i) => {
    if (inShare(i, plan.ipv6Share)) moves.set(address, { kind: "privacy", prefix: `fd00:0:${hex(i >> 16)}:${hex(i & 0xffff)}` });
    else if (inShare(i, plan.churnShare, 1)) moves.set(address, { kind: "churn", at: Math.random() * runMs, to: address.replace(/^10\./, "11.") });
  });
  const moved = fleet.map((kiosk) => ({ ...kiosk, moves: moves.get(kiosk.address) }));
  const copies = moved.flatMap((kiosk, n) =>
    inShare(n, plan.copiedShare)
      ? [{
        kiosk: { ...kiosk, address: `12.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`, moves: undefined, dark: false },
        bootAt: bootMs + Math.random() * Math.max(0, runMs / 2 - bootMs),
      }]
      : []
  );
  return { fleet: moved, copies };
}

/** What the seat checks found: the copies flagged, how soon after their second device started, and false flags. */
export interface SeatJudgement {
  copiedKeys: number;
  found: number;
  /** From the second device's start to the first pass that flagged its key, over the copies found. */
  detectionSeconds: { median: number; max: number };
  /** Honest keys (no second device) flagged: the goal is 0. */
  falseFlags: number;
  /** Flagged keys per rule, copies and honest together. */
  byRule: Record<string, number>;
}

/** Reads public.seat_suspicions after the run and judges it against the copies made (`startedAt`: the run's start, epoch ms). */
export async function judgeSeats(sql: postgres.Sql, copies: Copy[], startedAt: number, log: (line: string) => void): Promise<SeatJudgement> {
  const rows = await sql<{ license_key: string; rules: string[]; first_ms: number }[]>`
    select license_key, rules, (extract(epoch from first_flagged_at) * 1000)::float8 as first_ms
      from public.seat_suspicions where license_key like 'SIMK-%'`;
  const copied = new Map(copies.map((copy) => [copy.kiosk.key, startedAt + copy.bootAt]));
  const delays: number[] = [];
  const byRule: Record<string, number> = {};
  let falseFlags = 0;
  for (const row of rows) {
    for (const rule of row.rules) byRule[rule] = (byRule[rule] ?? 0) + 1;
    const started = copied.get(row.license_key);
    if (started === undefined) falseFlags++;
    else delays.push((row.first_ms - started) / 1000);
  }
  delays.sort((a, b) => a - b);
  if (falseFlags > 0) log(`unexpected: seat checks flagged ${falseFlags} honest keys, e.g. ${rows.filter((r) => !copied.has(r.license_key)).slice(0, 5).map((r) => `${r.license_key} (${r.rules.join(", ")})`).join(", ")}`);
  return {
    copiedKeys: copies.length,
    found: delays.length,
    detectionSeconds: { median: delays[delays.length >> 1] ?? 0, max: delays.at(-1) ?? 0 },
    falseFlags,
    byRule,
  };
}
