/// <reference lib="deno.ns" />
// `npm run bench -- --edits [--keys=1,1000,10000,100000] [--repeats=15]`: what staff edits cost as an account's
// fleet grows. For each size, on a fresh throwaway Postgres 15 migrated as the tests migrate it, one
// account gets that many keys in one statement (the import, timed per key), every key a sighting,
// and then each edit the issue names is committed and timed (median of REPEATS): a block of the
// account's daily schedule, the schedule's type, the account's e-mail, a key moving to another
// account. Then a poll's read while an edit holds its locks, and a page of kiosk_status.
import { readFileSync } from "node:fs";
import pg from "pg";
import type { BenchFlags } from "./flags.ts";
import { migratedDatabase } from "./database.ts";

/** Commits timed per edit (`--repeats=N`); the median is reported. */
let REPEATS = 15;
const DEFAULT_SIZES = [1, 1_000, 10_000, 100_000];
/** An edit slower than this is cancelled and reported as such (the old per-key design at 100,000). */
const EDIT_TIMEOUT_MS = 180_000;
const ACCOUNT = "a0000000-0000-4000-8000-0000000000e1";
const OTHER = "a0000000-0000-4000-8000-0000000000e2";
const SCHEDULE = "c0000000-0000-4000-8000-0000000000e1";
const BLOCK = "d0000000-0000-4000-8000-0000000000e1";
/** The chain account's Supabase Auth user: its holder edits through the Data API. */
const HOLDER = "e0000000-0000-4000-8000-0000000000e1";
/** The account schedule's three daily blocks. */
const BLOCKS = `insert into public.schedule_blocks (id, schedule_id, start_time, end_time) values
  ('${BLOCK}', '${SCHEDULE}', '06:00', '09:00'), (gen_random_uuid(), '${SCHEDULE}', '12:00', '13:00'),
  (gen_random_uuid(), '${SCHEDULE}', '22:00', '06:00')`;

export interface EditRow {
  keys: number;
  importMsPerKey: number;
  blockEditMs: number | null;
  holderBlockEditMs: number | null;
  typeChangeMs: number | null;
  emailChangeMs: number | null;
  keyMoveMs: number | null;
  pollDuringEditMs: number;
  statusPageMs: Record<string, number>;
}

function median(values: number[]): number {
  const sorted = values.toSorted((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The key of fleet member `n`, in the license-key format. */
function editKey(n: number): string {
  const digits = String(n).padStart(12, "0");
  return `EDIT-${digits.slice(0, 4)}-${digits.slice(4, 8)}-${digits.slice(8)}`;
}

/** Milliseconds `work` takes, committed (each statement is its own transaction unless `work` opens one). */
async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

/** The median commit time of `edit` over REPEATS, each followed (untimed) by `undo`; null if one ran past EDIT_TIMEOUT_MS. */
async function medianEdit(client: pg.Client, edit: string[], undo: string[]): Promise<number | null> {
  const times: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    try {
      times.push(await timed(async () => {
        await client.query("begin");
        for (const statement of edit) await client.query(statement);
        await client.query("commit");
      }));
    } catch (error) {
      await client.query("rollback");
      if (error instanceof Error && /statement timeout/.test(error.message)) return null;
      throw error;
    }
    for (const statement of undo) await client.query(statement);
  }
  return median(times);
}

async function measureSize(keys: number, log: (line: string) => void): Promise<EditRow> {
  const database = await migratedDatabase();
  const client = new pg.Client({ connectionString: database.url });
  const other = new pg.Client({ connectionString: database.url });
  await client.connect();
  await other.connect();
  try {
    await client.query(`set statement_timeout = ${EDIT_TIMEOUT_MS}`);
    await client.query(
      `insert into public.accounts (id, email, display_name) values
         ('${ACCOUNT}', 'chain@example.com', 'Chain'), ('${OTHER}', 'elsewhere@example.com', 'Elsewhere');
       update public.accounts set auth_user_id = '${HOLDER}' where id = '${ACCOUNT}';
       insert into public.schedules (id, account_id, type) values ('${SCHEDULE}', '${ACCOUNT}', 'daily');
       ${BLOCKS}`,
    );
    // The import: the staff recipe as staff run it, with the keys pasted in.
    const recipe = readFileSync(new URL("../../sql/recipes/import-license-keys.sql", import.meta.url), "utf8")
      .replace(/IMPT-0000-0000-0001\nIMPT-0000-0000-0002/, Array.from({ length: keys }, (_, n) => editKey(n)).join("\n"))
      .replace("'demo@example.com'", "'chain@example.com'");
    const importMs = await timed(() => client.query(recipe));
    await client.query(
      `insert into public.kiosk_sightings (license_key, last_seen_at, last_seen_ip)
       select key, now() - random() * interval '2 hours', '198.51.100.7' from public.license_keys`,
    );
    await client.query("analyze");
    log(`${keys} keys imported in ${importMs.toFixed(0)} ms`);

    const blockEditMs = await medianEdit(
      client,
      [`update public.schedule_blocks set end_time = end_time + interval '1 minute' where id = '${BLOCK}'`],
      [],
    );
    log(`${keys}: block edit ${blockEditMs?.toFixed(2)} ms`);
    // The same edit by the account holder, as the Data API runs it: `authenticated`, with their claims.
    const holderBlockEditMs = await medianEdit(
      client,
      [
        "set local role authenticated",
        `select set_config('request.jwt.claims', '{"sub":"${HOLDER}","role":"authenticated"}', true)`,
        `update public.schedule_blocks set end_time = end_time + interval '1 minute' where id = '${BLOCK}'`,
      ],
      [],
    );
    log(`${keys}: holder's block edit ${holderBlockEditMs?.toFixed(2)} ms`);
    // A type change needs blocks that fit the new type: staff delete the daily blocks, then switch.
    const typeChangeMs = await medianEdit(
      client,
      [`delete from public.schedule_blocks where schedule_id = '${SCHEDULE}'`, `update public.schedules set type = 'weekly' where id = '${SCHEDULE}'`],
      [`update public.schedules set type = 'daily' where id = '${SCHEDULE}'`, BLOCKS],
    );
    log(`${keys}: type change ${typeChangeMs?.toFixed(2)} ms`);
    const emailChangeMs = await medianEdit(
      client,
      [`update public.accounts set email = 'chain-renamed@example.com' where id = '${ACCOUNT}'`],
      [`update public.accounts set email = 'chain@example.com' where id = '${ACCOUNT}'`],
    );
    log(`${keys}: e-mail change ${emailChangeMs?.toFixed(2)} ms`);
    const keyMoveMs = await medianEdit(
      client,
      [`update public.license_keys set account_id = '${OTHER}', email = 'elsewhere@example.com' where key = '${editKey(0)}'`],
      [`update public.license_keys set account_id = '${ACCOUNT}', email = 'chain@example.com' where key = '${editKey(0)}'`],
    );
    log(`${keys}: key move ${keyMoveMs?.toFixed(2)} ms`);

    // A poll while an edit of the schedule it reads is open: MVCC, it must not wait for the edit.
    await client.query("begin");
    await client.query(`update public.schedule_blocks set end_time = end_time + interval '1 minute' where id = '${BLOCK}'`);
    const polls: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      polls.push(await timed(() => other.query("select * from cadence.license_schedules_unless_held(array[$1], array[null])", [editKey(keys - 1)])));
    }
    const pollDuringEditMs = median(polls);
    await client.query("rollback");

    const pages: Record<string, string> = {
      "unordered": "select * from public.kiosk_status limit 100",
      "by key": "select * from public.kiosk_status order by license_key limit 100 offset 100",
      "by last seen": "select * from public.kiosk_status order by last_seen_at desc nulls last limit 100",
    };
    const statusPageMs: Record<string, number> = {};
    for (const [name, query] of Object.entries(pages)) {
      const times: number[] = [];
      for (let i = 0; i < REPEATS; i++) times.push(await timed(() => other.query(query)));
      statusPageMs[name] = median(times);
    }
    return {
      keys,
      importMsPerKey: importMs / keys,
      blockEditMs,
      holderBlockEditMs,
      typeChangeMs,
      emailChangeMs,
      keyMoveMs,
      pollDuringEditMs,
      statusPageMs,
    };
  } finally {
    await client.end();
    await other.end();
    await database.server.stop();
  }
}

const ms = (value: number | null) => (value === null ? `> ${EDIT_TIMEOUT_MS / 1000} s` : value.toFixed(2));

/** The table of `rows`, in markdown. */
export function editTable(rows: EditRow[]): string {
  const header = "| keys in the account | import, ms per key | block edit, ms | the same by the account holder, ms | type change, ms | e-mail change, ms | key move, ms | poll during an edit, ms | kiosk_status page (unordered / by key / by last seen), ms |";
  const lines = rows.map((row) =>
    `| ${row.keys.toLocaleString("en")} | ${row.importMsPerKey.toFixed(4)} | ${ms(row.blockEditMs)} | ${ms(row.holderBlockEditMs)} | ${ms(row.typeChangeMs)} | ${ms(row.emailChangeMs)} | ${ms(row.keyMoveMs)} | ${row.pollDuringEditMs.toFixed(2)} | ${
      Object.values(row.statusPageMs).map((value) => value.toFixed(1)).join(" / ")
    } |`
  );
  return [header, `|${"---|".repeat(9)}`, ...lines].join("\n");
}

/** Runs every size (`--keys=a,b,...` to choose) and prints the table. */
export async function measureScheduleEdits(flags: Pick<BenchFlags, "keys" | "repeats">): Promise<EditRow[]> {
  const sizes = flags.keys ?? DEFAULT_SIZES;
  if (flags.repeats) REPEATS = flags.repeats;
  const rows: EditRow[] = [];
  for (const keys of sizes) rows.push(await measureSize(keys, (line) => console.error(`bench: ${line}`)));
  console.log(editTable(rows));
  const [smallest, largest] = [rows[0], rows.at(-1)!];
  if (rows.length > 1 && smallest.blockEditMs !== null) {
    const pass = largest.blockEditMs !== null && largest.blockEditMs <= 2 * smallest.blockEditMs && largest.blockEditMs < 100;
    console.log(
      `block edit at ${largest.keys.toLocaleString("en")} keys: ${ms(largest.blockEditMs)} ms against ${ms(smallest.blockEditMs)} ms at ${smallest.keys} ` +
        `(target: at most twice, and under 100 ms): ${pass ? "PASS" : "MISS"}`,
    );
  }
  return rows;
}
