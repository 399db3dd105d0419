import type postgres from "postgres";

/** One simulated kiosk: its key, its venue's account e-mail and address, and which read it polls. */
export interface Kiosk {
  key: string;
  email: string;
  /** The venue's public address, as Supabase's gateway sends it in `cf-connecting-ip`. */
  address: string;
  systemName: string;
  /** An older kiosk: polls the legacy schedule read (no ETag), not the license schedule. */
  legacy: boolean;
  /** Has a weekly schedule of its own; the others read their venue account's daily schedule. */
  ownSchedule: boolean;
  /** Goes dark (stops calling) for a window of the run, then calls again (dark-kiosks.ts). */
  dark: boolean;
  /** How its venue's address moves during the run (seats.ts): a renewal at `at` ms, or IPv6 privacy addresses. */
  moves?: { kind: "churn"; at: number; to: string } | { kind: "privacy"; prefix: string };
}

/** Keys of the simulated fleet: `SIMK-` and the kiosk's number in 12 digits. */
export const FLEET_KEY_PREFIX = "SIMK-";
const fleetKey = (n: number) => FLEET_KEY_PREFIX + String(n).padStart(12, "0").replace(/^(\d{4})(\d{4})(\d{4})$/, "$1-$2-$3");
const venueEmail = (venue: number) => `venue-${venue}@fleet.example`;
/** A venue's address, one per venue, in 10.0.0.0/8. */
const venueAddress = (venue: number) => `10.${(venue >> 16) & 255}.${(venue >> 8) & 255}.${venue & 255}`;

/** Whether item `n` is one of an evenly spread `share` of items (exactly round(share * count) of them). */
const inShare = (n: number, share: number) => Math.floor((n + 1) * share) > Math.floor(n * share);

/**
 * The fleet: `kiosks` kiosks in venues of `perAddress.low` to `perAddress.high` kiosks (drawn at
 * random), each venue one account behind one address. `legacyShare` of the kiosks poll the legacy
 * read; every third has a weekly schedule of its own; `darkShare` go dark for a while.
 */
export function layoutFleet(kiosks: number, perAddress: { low: number; high: number }, legacyShare: number, darkShare = 0): Kiosk[] {
  const fleet: Kiosk[] = [];
  for (let venue = 0; fleet.length < kiosks; venue++) {
    const size = Math.min(kiosks - fleet.length, perAddress.low + Math.floor(Math.random() * (perAddress.high - perAddress.low + 1)));
    for (let seat = 0; seat < size; seat++) {
      const n = fleet.length;
      fleet.push({
        key: fleetKey(n),
        email: venueEmail(venue),
        address: venueAddress(venue),
        systemName: `Kiosk ${seat + 1}`,
        legacy: inShare(n, legacyShare),
        ownSchedule: n % 3 === 2,
        dark: inShare(n, darkShare),
      });
    }
  }
  return fleet;
}

/** The demo seed's first two proclamations, which every simulated block plays. */
const PLAYED = ["b0000000-0000-4000-8000-000000000001", "b0000000-0000-4000-8000-000000000002"];

/**
 * Inserts the fleet, set-based: an account per venue, the keys, a weekly schedule for each key
 * that has its own, a daily one for each account some key reads, their blocks and what they play;
 * then stores every fleet key's payload once. The payload triggers are off meanwhile
 * (`session_replication_role = replica`): they would refresh every key after each of these
 * statements, and the key insert once per row, where one refresh at the end stores the same.
 */
export async function insertFleet(sql: postgres.Sql, fleet: Kiosk[]): Promise<void> {
  const venues = [...new Set(fleet.map((kiosk) => kiosk.email))];
  await sql.begin(async (tx) => {
    await tx.unsafe("set local session_replication_role = replica");
    await tx.unsafe(
      `insert into public.accounts (email, display_name) select e, 'Venue ' || n from unnest($1::text[]) with ordinality as v(e, n)`,
      [venues],
    );
    await tx.unsafe(
      `insert into public.license_keys (key, account_id, email)
       select k.key, a.id, a.email from unnest($1::text[], $2::text[]) as k(key, email) join public.accounts as a on a.email = k.email`,
      [fleet.map((kiosk) => kiosk.key), fleet.map((kiosk) => kiosk.email)],
    );
    await tx.unsafe(`insert into public.schedules (license_key, type) select k, 'weekly' from unnest($1::text[]) as k`, [
      fleet.filter((kiosk) => kiosk.ownSchedule).map((kiosk) => kiosk.key),
    ]);
    await tx.unsafe(
      `insert into public.schedules (account_id, type)
       select distinct a.id, 'daily' from unnest($1::text[]) as k(email) join public.accounts as a on a.email = k.email`,
      [fleet.filter((kiosk) => !kiosk.ownSchedule).map((kiosk) => kiosk.email)],
    );
    // Daily: night, morning and an overnight block; weekly: 09:00-17:00 every day.
    await tx.unsafe(`
      insert into public.schedule_blocks (schedule_id, weekday, start_time, end_time, dynamic_audio)
      select s.id, null, b.start_time, b.end_time, b.dynamic_audio
      from public.schedules as s
      join public.accounts as a on a.id = s.account_id and a.email like '%@fleet.example',
      (values (time '00:00', time '06:00', false), ('08:00', '12:00', true), ('22:00', '02:00', false)) as b(start_time, end_time, dynamic_audio)
      union all
      select s.id, d, '09:00', '17:00', false
      from public.schedules as s, unnest(array['monday','tuesday','wednesday','thursday','friday','saturday','sunday']) as d
      where s.license_key like '${FLEET_KEY_PREFIX}%'`);
    await tx.unsafe(
      `insert into public.schedule_block_proclamations (block_id, position, proclamation_id)
       select b.id, p.position, p.id
       from public.schedule_blocks as b
       join public.schedules as s on s.id = b.schedule_id
       left join public.accounts as a on a.id = s.account_id,
       unnest($1::uuid[]) with ordinality as p(id, position)
       where s.license_key like '${FLEET_KEY_PREFIX}%' or a.email like '%@fleet.example'`,
      [PLAYED],
    );
    // Triggers are off (replica) for the bulk insert: store each schedule's payload once, at the end,
    // with statistics, so that each assembly is planned for the fleet's tables, not empty ones.
    await tx.unsafe("analyze public.schedules, public.schedule_blocks, public.schedule_block_proclamations");
    await tx.unsafe("select cadence.refresh_schedule_payloads(array(select s.id from public.schedules as s))");
  });
  // As autovacuum would soon: without statistics the planner takes the tables for the demo's few rows.
  await sql.unsafe("analyze");
}

/**
 * Registers every venue's address for its kiosks (public.venue_addresses), as staff would in the
 * dashboard: one /32 per venue, its kiosk count, so the kiosk routes allow it kiosks x 10 a minute.
 * Returns how many venues were registered.
 */
export async function registerVenues(sql: postgres.Sql, fleet: Kiosk[]): Promise<number> {
  const sizes = new Map<string, { email: string; kiosks: number }>();
  for (const kiosk of fleet) {
    const venue = sizes.get(kiosk.address) ?? { email: kiosk.email, kiosks: 0 };
    venue.kiosks += 1;
    sizes.set(kiosk.address, venue);
  }
  await sql.unsafe(
    `insert into public.venue_addresses (account_id, network, kiosks)
     select a.id, v.address::cidr, v.kiosks
     from unnest($1::text[], $2::text[], $3::int[]) as v(address, email, kiosks) join public.accounts as a on a.email = v.email`,
    [[...sizes.keys()], [...sizes.values()].map((v) => v.email), [...sizes.values()].map((v) => v.kiosks)],
  );
  return sizes.size;
}
