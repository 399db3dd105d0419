import { readdirSync, readFileSync } from "node:fs";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

// The migrations that tightened stored-data rules (issue 39: venues, time zones, system names), on a
// deployment holding data they no longer accept: each keeps or repairs what is stored, and reports
// it. Applied file by file as `supabase db push` does, on a database holding every migration before
// them and the seed.

const root = new URL("../../", import.meta.url);
const migrations = new URL("supabase/migrations/", root);
const FIRST_NEW = "20261126000300";
const LAST_NEW = "20261126000399";
const files = readdirSync(migrations).filter((file) => file.endsWith(".sql")).sort();
const before = files.filter((file) => file < FIRST_NEW);
const ours = files.filter((file) => file >= FIRST_NEW && file <= `${LAST_NEW}~`);
const account = { demo: "a0000000-0000-4000-8000-000000000001", other: "a0000000-0000-4000-8000-000000000002" } as const;

let sql: postgres.Sql;
let adminUrl: string;
const notices: { severity: string; message: string }[] = [];
const name = `issue39_${process.pid}_${Date.now()}`;

beforeAll(async () => {
  adminUrl = inject("pgAdminUrl");
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  sql = postgres(adminUrl.replace(/\/postgres$/, `/${name}`), {
    max: 1,
    onnotice: (notice) => notices.push({ severity: notice.severity as string, message: notice.message as string }),
  });
  await sql.unsafe(readFileSync(new URL("sql/supabase-shim.sql", root), "utf8"));
  for (const file of before) await sql.begin((tx) => tx.unsafe(readFileSync(new URL(file, migrations), "utf8")));
  await sql.unsafe(readFileSync(new URL("supabase/seed.sql", root), "utf8"));
  // What the rules before these migrations let in.
  await sql`update public.license_keys set time_zone = 'localtime' where key = 'DEMO-0000-0000-0001'`;
  await sql`update public.license_keys set time_zone = 'posix/Europe/Berlin' where key = 'DEMO-0000-0000-0002'`;
  await sql`update public.license_keys set time_zone = 'posix/America/New_York' where key = 'DEMO-0000-0000-0003'`;
  await sql`update public.license_keys set time_zone = 'Asia/Tokyo' where key = 'DEMO-0000-0000-0005'`;
  await sql`update public.accounts set time_zone = 'Factory' where id = ${account.demo}`;
  await sql`update public.accounts set time_zone = 'posix/Asia/Kolkata' where id = ${account.other}`;
  await sql`insert into public.venue_addresses (account_id, network, kiosks) values (${account.other}, '2001:db8:5a::/48', 1), (${account.demo}, '203.0.113.7/32', 1)`;
  // As an account holder registered it (the trigger keeps created_by, so it is set with triggers off).
  await sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`;
    await tx`update public.venue_addresses set created_by = 'account holder e0000000-0000-4000-8000-000000000002' where account_id = ${account.other}`;
  });
  await sql`update public.license_keys set system_name = ${"\u3164"} where key = 'DEMO-0000-0000-0001'`;
  await sql`update public.license_keys set system_name = ${"Hall\u0001"} where key = 'DEMO-0000-0000-0004'`;
  await sql`update public.license_keys set system_name = 'Lobby' where key = 'DEMO-0000-0000-0002'`;
  notices.length = 0;
  for (const file of ours) await sql.begin((tx) => tx.unsafe(readFileSync(new URL(file, migrations), "utf8")));
});

afterAll(async () => {
  await sql?.end();
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
});

describe("time zones: stored values that are no IANA zone are repaired, each change reported", () => {
  it("posix/X becomes X; localtime and Factory become the account's zone on a key, UTC on an account; IANA names stay", async () => {
    const keys = await sql`select key, time_zone from public.license_keys where key like 'DEMO-%' order by key`;
    expect(keys.map((row) => [row.key, row.time_zone])).toEqual([
      ["DEMO-0000-0000-0001", null],
      ["DEMO-0000-0000-0002", "Europe/Berlin"],
      ["DEMO-0000-0000-0003", "America/New_York"],
      ["DEMO-0000-0000-0004", null],
      ["DEMO-0000-0000-0005", "Asia/Tokyo"],
    ]);
    const accounts = await sql`select id::text, time_zone from public.accounts where id in (${account.demo}, ${account.other}) order by id`;
    expect(accounts.map((row) => row.time_zone)).toEqual(["UTC", "Asia/Kolkata"]);
  });

  it("reports each change, old and new, one line per row", () => {
    const lines = notices.filter((notice) => notice.message.startsWith("time zone repaired")).map((notice) => notice.message);
    expect(lines).toEqual([
      `time zone repaired: accounts.${account.demo} Factory -> UTC`,
      `time zone repaired: accounts.${account.other} posix/Asia/Kolkata -> Asia/Kolkata`,
      "time zone repaired: license_keys.DEMO-0000-0000-0001 localtime -> empty (its account's zone)",
      "time zone repaired: license_keys.DEMO-0000-0000-0002 posix/Europe/Berlin -> Europe/Berlin",
      "time zone repaired: license_keys.DEMO-0000-0000-0003 posix/America/New_York -> America/New_York",
    ]);
    expect(notices.some((notice) => notice.message === "time zones repaired: 5 rows (listed above)")).toBe(true);
  });
});

describe("venue addresses: ranges an account holder registered are kept and reported", () => {
  it("keeps every registration and warns of the holder's range, naming it", async () => {
    expect(await sql`select network::text from public.venue_addresses order by network`).toEqual([{ network: "2001:db8:5a::/48" }, { network: "203.0.113.7/32" }]);
    const warning = notices.find((notice) => notice.message.startsWith("venue ranges an account holder registered"));
    expect(warning?.severity).toBe("WARNING");
    expect(warning?.message).toContain(`(2001:db8:5a::/48, account ${account.other})`);
    expect(warning?.message).not.toContain("203.0.113.7");
  });
});

describe("system names: names stored before that show nothing are kept and reported", () => {
  it("keeps them as they are and warns with their count and keys; a name that shows is not named", async () => {
    const names = await sql`select key, system_name from public.license_keys where key in ('DEMO-0000-0000-0001', 'DEMO-0000-0000-0002', 'DEMO-0000-0000-0004') order by key`;
    expect(names.map((row) => row.system_name)).toEqual(["\u3164", "Lobby", "Hall\u0001"]);
    const warning = notices.find((notice) => notice.message.startsWith("system names that show nothing"));
    expect(warning?.severity).toBe("WARNING");
    expect(warning?.message).toMatch(/: 2 keys: DEMO-0000-0000-0001, DEMO-0000-0000-0004$/);
  });

  it("lets their rows change otherwise, and refuses them as new names", async () => {
    await sql`update public.license_keys set active = active where key = 'DEMO-0000-0000-0001'`;
    await expect(sql`update public.license_keys set system_name = ${"\u2800"} where key = 'DEMO-0000-0000-0002'`).rejects.toMatchObject({ constraint_name: "system_name_is_normalised" });
  });
});
