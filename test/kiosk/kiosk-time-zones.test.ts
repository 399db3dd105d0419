import { existsSync, readFileSync } from "node:fs";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scopedDatabase } from "../support/database.ts";

// Time zones and alert settings: refused when unknown, and what an account holder may change
// through the Data API (as it runs a request: `set local role authenticated`, claims in
// `request.jwt.claims`). The demo data: demo (keys 1-3), other (key 4).

const users = { demo: "e0000000-0000-4000-8000-000000000001", other: "e0000000-0000-4000-8000-000000000002" } as const;
const account = { demo: "a0000000-0000-4000-8000-000000000001", other: "a0000000-0000-4000-8000-000000000002" } as const;
const rollback = new Error("rollback");

const database = scopedDatabase();
let sql: postgres.Sql;

beforeAll(async () => {
  sql = postgres(database.url, { max: 1, onnotice: () => {} });
  await sql`update public.accounts set auth_user_id = ${users.demo} where id = ${account.demo}`;
  await sql`update public.accounts set auth_user_id = ${users.other} where id = ${account.other}`;
});
afterAll(async () => {
  await sql?.end();
});

/** Runs `text` as account holder `who` in a transaction that is rolled back; returns its rows. */
async function as(who: keyof typeof users, text: string): Promise<Record<string, unknown>[]> {
  let rows: Record<string, unknown>[] = [];
  try {
    await sql.begin(async (tx) => {
      await tx.unsafe("set local role authenticated");
      await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: users[who], role: "authenticated" })}, true)`;
      rows = [...await tx.unsafe(text)];
      throw rollback;
    });
  } catch (error) {
    if (error !== rollback) throw error;
  }
  return rows;
}

describe("time zones: every key and account has an IANA zone, checked by the database", () => {
  it("an account is in UTC and its keys in its zone until set", async () => {
    const [row] = await sql`select a.time_zone as account_zone, k.time_zone as key_zone, a.offline_alert_after::text as after
                              from public.license_keys k join public.accounts a on a.id = k.account_id where k.key = 'DEMO-0000-0000-0001'`;
    expect(row).toEqual({ account_zone: "UTC", key_zone: null, after: "00:15:00" });
    const [status] = await sql`select time_zone from public.kiosk_status where license_key = 'DEMO-0000-0000-0001'`;
    expect(status.time_zone).toBe("UTC");
  });

  it("a known name is stored, on a key or an account, and kiosk_status shows the key's own before the account's", async () => {
    await sql`update public.accounts set time_zone = 'Pacific/Chatham' where id = ${account.demo}`;
    await sql`update public.license_keys set time_zone = 'America/New_York' where key = 'DEMO-0000-0000-0002'`;
    const rows = await sql`select license_key, time_zone from public.kiosk_status where license_key in ('DEMO-0000-0000-0001', 'DEMO-0000-0000-0002') order by 1`;
    expect([...rows]).toEqual([
      { license_key: "DEMO-0000-0000-0001", time_zone: "Pacific/Chatham" },
      { license_key: "DEMO-0000-0000-0002", time_zone: "America/New_York" },
    ]);
  });

  it("an unknown name is refused, naming it and the rule, on keys and accounts, one row or many", async () => {
    const refused = { code: "23514", constraint_name: "time_zone_is_known", message: expect.stringContaining(`unknown time zone 'Mars/Olympus'`) };
    await expect(sql`update public.license_keys set time_zone = 'Mars/Olympus' where key = 'DEMO-0000-0000-0001'`).rejects.toMatchObject(refused);
    await expect(sql`update public.accounts set time_zone = 'Mars/Olympus'`).rejects.toMatchObject(refused);
    await expect(sql`insert into public.license_keys (key, email, time_zone) values ('ZONE-0000-0000-0001', 'x@example.com', 'Mars/Olympus')`)
      .rejects.toMatchObject(refused);
    // A bulk edit: the known zone of the first rows does not let the unknown one of a later row through.
    await expect(sql`update public.license_keys set time_zone = case when key = 'DEMO-0000-0000-0005' then 'europe/berlinn' else 'Europe/Berlin' end`)
      .rejects.toMatchObject({ constraint_name: "time_zone_is_known", message: expect.stringContaining("'europe/berlinn'") });
  });

  it("refuses the zoneinfo directory's names that are no IANA zone: localtime, posixrules, Factory, posix/..., right/...", async () => {
    for (const zone of ["localtime", "posixrules", "Factory", "posix/Europe/Berlin", "right/Europe/Berlin", "posix/UTC"]) {
      const refused = { code: "23514", constraint_name: "time_zone_is_known", message: expect.stringContaining(`unknown time zone '${zone}'`) };
      await expect(sql`update public.license_keys set time_zone = ${zone} where key = 'DEMO-0000-0000-0001'`, zone).rejects.toMatchObject(refused);
      await expect(sql`update public.accounts set time_zone = ${zone} where id = ${account.other}`, zone).rejects.toMatchObject(refused);
    }
  });

  it("accepts canonical names and IANA's backward links", async () => {
    await sql.begin(async (tx) => {
      for (const zone of ["Europe/Berlin", "Etc/GMT+5", "UTC", "US/Eastern", "Asia/Calcutta", "GB"]) {
        await tx`update public.license_keys set time_zone = ${zone} where key = 'DEMO-0000-0000-0001'`;
      }
      await tx`update public.license_keys set time_zone = null where key = 'DEMO-0000-0000-0001'`;
    });
  });

  const tzdata = "/usr/share/zoneinfo/tzdata.zi";
  it.skipIf(!existsSync(tzdata))("accepts exactly the zones and links of IANA's own list (tzdata.zi), Factory aside, where Postgres reads the system's zoneinfo", async () => {
    const iana = readFileSync(tzdata, "utf8").split("\n")
      .map((line) => /^Z (\S+)/.exec(line)?.[1] ?? /^L \S+ (\S+)/.exec(line)?.[1])
      .filter((name): name is string => name !== undefined && name !== "Factory")
      .sort();
    const accepted = (await sql`select zone from cadence.iana_time_zones() as zone`).map((row) => row.zone as string);
    expect(accepted.sort()).toEqual(iana);
  });

  it("the alert threshold is between a minute and a week", async () => {
    for (const after of ["30 seconds", "8 days"]) {
      await expect(sql`update public.accounts set offline_alert_after = ${after}::interval`)
        .rejects.toMatchObject({ constraint_name: "offline_alert_after_is_between_a_minute_and_a_week" });
    }
  });
});

describe("time zones and alerts, as an account holder changes them through the Data API", () => {
  it("sets the zone of their own keys and mutes their alerts", async () => {
    expect(await as("demo", "update public.license_keys set time_zone = 'Asia/Kolkata', alerts_muted = true where key = 'DEMO-0000-0000-0001' returning key, time_zone, alerts_muted"))
      .toEqual([{ key: "DEMO-0000-0000-0001", time_zone: "Asia/Kolkata", alerts_muted: true }]);
  });

  it("never another account's keys", async () => {
    expect(await as("demo", "update public.license_keys set time_zone = 'Asia/Kolkata' where key = 'DEMO-0000-0000-0004' returning key")).toEqual([]);
  });

  it("sets their account's zone and alert threshold, not another account's", async () => {
    expect(await as("demo", "update public.accounts set time_zone = 'Europe/Berlin', offline_alert_after = '30 minutes' returning id, time_zone"))
      .toEqual([{ id: account.demo, time_zone: "Europe/Berlin" }]);
    expect(await as("demo", `update public.accounts set time_zone = 'Europe/Berlin' where id = '${account.other}' returning id`)).toEqual([]);
  });

  it("meets the same refusal for an unknown zone", async () => {
    await expect(as("demo", "update public.license_keys set time_zone = 'Mars/Olympus' where key = 'DEMO-0000-0000-0001'"))
      .rejects.toMatchObject({ constraint_name: "time_zone_is_known" });
  });

  it("changes nothing else of a key or an account", async () => {
    for (const text of [
      "update public.license_keys set system_name = 'x' where key = 'DEMO-0000-0000-0001'",
      "update public.license_keys set active = false where key = 'DEMO-0000-0000-0001'",
      "update public.accounts set email = 'new@example.com'",
      "update public.accounts set display_name = 'New'",
    ]) {
      await expect(as("demo", text)).rejects.toMatchObject({ code: "42501" });
    }
  });
});
