import type postgres from "postgres";
import { FLEET_KEY_PREFIX } from "./fleet.ts";

/** A key whose served schedule a change altered, and the version it now serves. */
export interface Concerned {
  key: string;
  version: string;
}

/** The ids of the fleet's schedules: the keys' own and their venue accounts'. */
export async function fleetSchedules(sql: postgres.Sql): Promise<string[]> {
  const rows = await sql.unsafe<Array<{ id: string }>>(
    `select s.id from public.schedules as s left join public.accounts as a on a.id = s.account_id
     where s.license_key like '${FLEET_KEY_PREFIX}%' or a.email like '%@fleet.example'`,
  );
  return rows.map((row) => row.id);
}

/** The versions served now to the keys that can read schedule `$1`: its key, or its account's keys. */
const VERSIONS = `
  select k.key, v.version
  from public.schedules as s
  join public.license_keys as k on k.key = s.license_key or k.account_id = s.account_id
  cross join lateral (select cadence.license_key_schedule_version(k.key) as version) as v
  where s.id = $1`;

/**
 * A staff edit as the dashboard makes it: the schedule's first block ends a minute later (so
 * each edit is new content, never an earlier version again). Returns the keys whose served
 * version it changed, read in the same transaction as the edit: the kiosks it concerns.
 * `synchronous_commit` is on for it, as on Supabase: the test cluster runs with it off, and a
 * crash right after could otherwise undo an edit the simulation counted as made.
 */
export async function changeSchedule(sql: postgres.Sql, scheduleId: string): Promise<Concerned[]> {
  return await sql.begin(async (tx) => {
    await tx.unsafe("set local synchronous_commit = on");
    const before = new Map((await tx.unsafe<Concerned[]>(VERSIONS, [scheduleId])).map((row) => [row.key, row.version]));
    await tx.unsafe(
      `update public.schedule_blocks set end_time = end_time + interval '1 minute'
       where id = (select id from public.schedule_blocks where schedule_id = $1 order by weekday nulls first, start_time limit 1)`,
      [scheduleId],
    );
    const after = await tx.unsafe<Concerned[]>(VERSIONS, [scheduleId]);
    return after.filter((row) => before.get(row.key) !== row.version).map(({ key, version }) => ({ key, version }));
  });
}

/**
 * Staff at work from `from` to `until` (the simulation's ms): one change every `intervalMs`, to a
 * schedule drawn at random, each recorded in `ledger` with the kiosks it concerns. An edit the
 * database refused (it was down) is reported and not counted as made.
 */
export async function staffAtWork(
  sql: postgres.Sql,
  schedules: string[],
  plan: { intervalMs: number; from: number; until: number; now(): number; record(concerned: Concerned[], madeAt: number): void; log(line: string): void },
): Promise<void> {
  for (let next = plan.from; next < plan.until; next += plan.intervalMs) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - plan.now())));
    const schedule = schedules[Math.floor(Math.random() * schedules.length)];
    try {
      plan.record(await changeSchedule(sql, schedule), plan.now());
    } catch (error) {
      plan.log(`a staff edit failed, not counted: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
