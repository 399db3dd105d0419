import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "../support/app.ts";
import { scopedDatabase } from "../support/database.ts";

// Row-level security as Supabase's Data API meets it: each request is a transaction that runs as
// `authenticated` (or `anon`) with the caller's JWT claims in `request.jwt.claims`. The demo data
// gives three accounts: demo (keys 1-3 linked; its own daily schedule, key 2's weekly one), other
// (key 4) and legacy (key 5, no owner link, paired by its stored e-mail).

/** Supabase Auth users: three linked to the demo accounts, one linked to no account. */
const users = {
  demo: "e0000000-0000-4000-8000-000000000001",
  other: "e0000000-0000-4000-8000-000000000002",
  legacy: "e0000000-0000-4000-8000-000000000003",
  unlinked: "e0000000-0000-4000-8000-000000000009",
} as const;
const account = {
  demo: "a0000000-0000-4000-8000-000000000001",
  other: "a0000000-0000-4000-8000-000000000002",
  legacy: "a0000000-0000-4000-8000-000000000003",
} as const;
const proclamation = {
  abundance: "b0000000-0000-4000-8000-000000000001",
  peace: "b0000000-0000-4000-8000-000000000002",
  clarity: "b0000000-0000-4000-8000-000000000003",
  /** Entitled to other only. */
  grounding: "b0000000-0000-4000-8000-000000000004",
  /** Entitled to demo, but 936 Hz has no canonical frequency: never served. */
  legacyTone: "b0000000-0000-4000-8000-000000000005",
} as const;
const schedule = { demoDaily: "c0000000-0000-4000-8000-000000000001", key2Weekly: "c0000000-0000-4000-8000-000000000002" } as const;
const block = { demoMorning: "d0000000-0000-4000-8000-000000000001", key2Monday: "d0000000-0000-4000-8000-000000000004" } as const;

type Who = keyof typeof users | "anon";
type Tx = postgres.TransactionSql;
type Rows = Record<string, unknown>[];

const rollback = new Error("rollback");

/** Links the demo accounts to their Auth users, as onboarding does. */
async function linkAuthUsers(url: string) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    for (const name of ["demo", "other", "legacy"] as const) {
      await sql`update public.accounts set auth_user_id = ${users[name]} where id = ${account[name]}`;
    }
  } finally {
    await sql.end();
  }
}

/**
 * Runs `work` as the Data API runs a request of `who`: a transaction, `set local role`, the JWT
 * claims in `request.jwt.claims`. Rolled back unless `commit`.
 */
async function as<T>(sql: postgres.Sql, who: Who, work: (tx: Tx) => Promise<T>, options: { commit?: boolean } = {}): Promise<T> {
  let result: T | undefined;
  const claims = who === "anon" ? { role: "anon" } : { sub: users[who], role: "authenticated" };
  try {
    await sql.begin(async (tx) => {
      await tx.unsafe(`set local role ${who === "anon" ? "anon" : "authenticated"}`);
      await tx`select set_config('request.jwt.claims', ${JSON.stringify(claims)}, true)`;
      result = await work(tx);
      if (!options.commit) throw rollback;
    });
  } catch (error) {
    if (error !== rollback) throw error;
  }
  return result as T;
}

/** A query's rows as plain objects. */
async function rows(tx: Tx, text: string, params: postgres.ParameterOrJSON<never>[] = []): Promise<Rows> {
  return [...(await tx.unsafe(text, params))];
}

const permissionDenied = { code: "42501", message: expect.stringMatching(/^permission denied for (table|view|column)/) };
const violatesPolicy = (table: string) => ({ code: "42501", message: `new row violates row-level security policy for table "${table}"` });

const database = scopedDatabase();
let sql: postgres.Sql;
const read = (who: Who, text: string, params: postgres.ParameterOrJSON<never>[] = []) => as(sql, who, (tx) => rows(tx, text, params));

beforeAll(async () => {
  await linkAuthUsers(database.url);
  // The seed stores no palette: one stored row, so there is something to read.
  await database.db.query("insert into public.color_palettes (canonical_frequency_id, colors) values (5, array['#FFFFFF', '#000000'])");
  sql = postgres(database.url, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await sql?.end();
});

describe("accounts", () => {
  it("an account holder reads their own account: id, e-mail, display name", async () => {
    expect(await read("demo", "select id, email, display_name from public.accounts")).toEqual([
      { id: account.demo, email: "demo@example.com", display_name: "Demo Account" },
    ]);
  });

  it("never another account's row", async () => {
    expect(await read("demo", "select id from public.accounts where id = $1", [account.other])).toEqual([]);
    expect(await read("other", "select id from public.accounts")).toEqual([{ id: account.other }]);
  });

  it("never the auth-link columns", async () => {
    for (const column of ["auth_user_id", "auth_link_attempts", "auth_link_error", "auth_link_due_at", "auth_email", "*"]) {
      await expect(read("demo", `select ${column} from public.accounts`)).rejects.toMatchObject(permissionDenied);
    }
  });

  it("never changes the account's e-mail, nor creates or deletes an account", async () => {
    await expect(read("demo", "update public.accounts set email = 'new@example.com'")).rejects.toMatchObject(permissionDenied);
    await expect(read("demo", "update public.accounts set display_name = 'New'")).rejects.toMatchObject(permissionDenied);
    await expect(read("demo", "insert into public.accounts (email, display_name) values ('x@example.com', 'X')")).rejects.toMatchObject(
      permissionDenied,
    );
    await expect(read("demo", "delete from public.accounts")).rejects.toMatchObject(permissionDenied);
  });

  it("an authenticated user linked to no account reads no account", async () => {
    expect(await read("unlinked", "select id from public.accounts")).toEqual([]);
  });
});

describe("license keys", () => {
  const columns = "select key, active, system_name, last_validated_at from public.license_keys order by key";

  it("an account holder reads their license keys: key, active, system name, last validated", async () => {
    // A validation an hour ago, on the real clock (whole seconds, as the column round-trips them).
    const validatedAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 3600_000);
    await database.db.query(
      "update public.license_keys set system_name = 'Lobby', last_validated_at = $1 where key = 'DEMO-0000-0000-0001'",
      [validatedAt.toISOString()],
    );
    try {
      expect(await read("demo", columns)).toEqual([
        { key: "DEMO-0000-0000-0001", active: true, system_name: "Lobby", last_validated_at: validatedAt },
        { key: "DEMO-0000-0000-0002", active: true, system_name: null, last_validated_at: null },
        { key: "DEMO-0000-0000-0003", active: false, system_name: null, last_validated_at: null },
      ]);
    } finally {
      await database.db.query("update public.license_keys set system_name = null, last_validated_at = null where key = 'DEMO-0000-0000-0001'");
    }
  });

  it("keys with no owner link whose stored e-mail pairs with their account count as theirs", async () => {
    expect(await read("legacy", "select key from public.license_keys")).toEqual([{ key: "DEMO-0000-0000-0005" }]);
  });

  it("never another account's keys", async () => {
    expect(await read("other", "select key from public.license_keys")).toEqual([{ key: "DEMO-0000-0000-0004" }]);
    expect(await read("demo", "select key from public.license_keys where key in ('DEMO-0000-0000-0004', 'DEMO-0000-0000-0005')")).toEqual([]);
  });

  it("never the owner link or the stored e-mail", async () => {
    for (const column of ["account_id", "email", "created_at", "*"]) {
      await expect(read("demo", `select ${column} from public.license_keys`)).rejects.toMatchObject(permissionDenied);
    }
  });

  it("never writes a key's system name (only the kiosk writes it), active flag, owner link or e-mail", async () => {
    for (const change of ["system_name = 'Hall'", "active = false", `account_id = '${account.demo}'`, "email = 'demo@example.com'", "last_validated_at = now()"]) {
      await expect(read("demo", `update public.license_keys set ${change} where key = 'DEMO-0000-0000-0001'`)).rejects.toMatchObject(
        permissionDenied,
      );
    }
  });

  it("never issues or deletes a key", async () => {
    await expect(read("demo", "insert into public.license_keys (key, email) values ('ZZZZ-0000-0000-0001', 'demo@example.com')")).rejects.toMatchObject(
      permissionDenied,
    );
    await expect(read("demo", "delete from public.license_keys where key = 'DEMO-0000-0000-0001'")).rejects.toMatchObject(permissionDenied);
  });

  it("an authenticated user linked to no account reads no key", async () => {
    expect(await read("unlinked", "select key from public.license_keys")).toEqual([]);
  });
});

describe("catalogue", () => {
  const catalogue = ["categories", "groups", "frequencies", "color_palettes"];

  it("an account holder reads the catalogue: categories, groups, frequencies, colour palettes", async () => {
    expect(await read("demo", "select id, name, sort_order from public.categories order by id")).toEqual([
      { id: 1, name: "Affirmations", sort_order: 1 },
      { id: 2, name: "Meditations", sort_order: 2 },
    ]);
    expect(await read("other", "select id from public.groups order by sort_order")).toEqual([{ id: 3 }, { id: 1 }, { id: 2 }]);
    expect(await read("legacy", "select hz from public.frequencies order by hz")).toEqual([174, 528, 639, 741, 936].map((hz) => ({ hz })));
    expect(await read("demo", "select canonical_frequency_id, colors from public.color_palettes")).toEqual([
      { canonical_frequency_id: 5, colors: ["#FFFFFF", "#000000"] },
    ]);
  });

  it("never changes the catalogue", async () => {
    for (const table of catalogue) {
      await expect(read("demo", `delete from public.${table}`)).rejects.toMatchObject(permissionDenied);
    }
    await expect(read("demo", "insert into public.categories (name) values ('Mine')")).rejects.toMatchObject(permissionDenied);
    await expect(read("demo", "update public.groups set name = 'Mine'")).rejects.toMatchObject(permissionDenied);
  });

  it("an authenticated user linked to no account reads no catalogue", async () => {
    for (const table of catalogue) expect(await read("unlinked", `select 1 from public.${table}`)).toEqual([]);
  });
});

describe("proclamations", () => {
  it("an account holder reads the proclamations their account is entitled to", async () => {
    expect(await read("demo", "select id from public.proclamations order by id")).toEqual(
      [proclamation.abundance, proclamation.peace, proclamation.clarity].map((id) => ({ id })),
    );
    expect(await read("other", "select id, name from public.proclamations")).toEqual([{ id: proclamation.grounding, name: "Grounding" }]);
  });

  it("never the ones with no canonical frequency, even when entitled", async () => {
    expect(await read("demo", "select id from public.proclamations where id = $1", [proclamation.legacyTone])).toEqual([]);
  });

  it("never the others", async () => {
    expect(await read("demo", "select id from public.proclamations where id = $1", [proclamation.grounding])).toEqual([]);
    expect(await read("legacy", "select id from public.proclamations")).toEqual([]);
    expect(await read("unlinked", "select id from public.proclamations")).toEqual([]);
  });

  it("never changes a proclamation", async () => {
    await expect(read("demo", "update public.proclamations set name = 'Mine'")).rejects.toMatchObject(permissionDenied);
    await expect(read("demo", "delete from public.proclamations")).rejects.toMatchObject(permissionDenied);
  });
});

describe("entitlements", () => {
  it("never reads or changes entitlements", async () => {
    await expect(read("demo", "select proclamation_id from public.account_proclamations")).rejects.toMatchObject(permissionDenied);
    await expect(
      read("demo", "insert into public.account_proclamations (account_id, proclamation_id) values ($1, $2)", [account.demo, proclamation.grounding]),
    ).rejects.toMatchObject(permissionDenied);
    await expect(read("demo", "delete from public.account_proclamations")).rejects.toMatchObject(permissionDenied);
  });
});

describe("schedules", () => {
  it("an account holder reads the schedules of their account and of their own keys", async () => {
    expect(await read("demo", "select id, license_key, account_id, type from public.schedules order by id")).toEqual([
      { id: schedule.demoDaily, license_key: null, account_id: account.demo, type: "daily" },
      { id: schedule.key2Weekly, license_key: "DEMO-0000-0000-0002", account_id: null, type: "weekly" },
    ]);
  });

  it("creates a schedule for their own key, and for a key that pairs by e-mail", async () => {
    const created = await read("demo", "insert into public.schedules (license_key, type) values ('DEMO-0000-0000-0001', 'weekly') returning license_key, type");
    expect(created).toEqual([{ license_key: "DEMO-0000-0000-0001", type: "weekly" }]);
    expect(await read("legacy", "insert into public.schedules (license_key, type) values ('DEMO-0000-0000-0005', 'daily') returning type")).toEqual([
      { type: "daily" },
    ]);
  });

  it("creates a schedule for their account", async () => {
    expect(await read("other", "insert into public.schedules (account_id, type) values ($1, 'daily') returning account_id", [account.other])).toEqual([
      { account_id: account.other },
    ]);
  });

  it("changes the type of their own schedule, and the type-change rule still holds", async () => {
    await as(sql, "demo", async (tx) => {
      await tx`delete from public.schedule_blocks where schedule_id = ${schedule.demoDaily}`;
      expect(await rows(tx, "update public.schedules set type = 'weekly' where id = $1 returning type", [schedule.demoDaily])).toEqual([{ type: "weekly" }]);
    });
    await expect(read("demo", "update public.schedules set type = 'daily' where id = $1", [schedule.key2Weekly])).rejects.toMatchObject({
      constraint_name: "block_weekday_matches_schedule_type",
    });
  });

  it("deletes their own schedule", async () => {
    expect(await read("demo", "delete from public.schedules where id = $1 returning id", [schedule.key2Weekly])).toEqual([{ id: schedule.key2Weekly }]);
  });

  it("every rule that holds for staff holds for them: one schedule per account, one owner", async () => {
    await expect(read("demo", "insert into public.schedules (account_id, type) values ($1, 'daily')", [account.demo])).rejects.toMatchObject({
      constraint_name: "one_schedule_per_account",
    });
    await expect(
      read("demo", "insert into public.schedules (account_id, license_key, type) values ($1, 'DEMO-0000-0000-0001', 'daily')", [account.demo]),
    ).rejects.toMatchObject({ constraint_name: "schedule_has_exactly_one_owner" });
  });

  it("never sees or touches another account's schedules", async () => {
    expect(await read("other", "select id from public.schedules")).toEqual([]);
    expect(await read("other", "update public.schedules set type = 'weekly' where id = $1 returning id", [schedule.demoDaily])).toEqual([]);
    expect(await read("other", "delete from public.schedules where id = $1 returning id", [schedule.demoDaily])).toEqual([]);
    expect(await read("legacy", "delete from public.schedules returning id")).toEqual([]);
  });

  it("never creates a schedule for another account or its keys", async () => {
    await expect(read("other", "insert into public.schedules (account_id, type) values ($1, 'daily')", [account.legacy])).rejects.toMatchObject(
      violatesPolicy("schedules"),
    );
    await expect(read("other", "insert into public.schedules (license_key, type) values ('DEMO-0000-0000-0001', 'daily')")).rejects.toMatchObject(
      violatesPolicy("schedules"),
    );
    await expect(read("demo", "insert into public.schedules (license_key, type) values ('DEMO-0000-0000-0005', 'daily')")).rejects.toMatchObject(
      violatesPolicy("schedules"),
    );
  });

  it("never moves a schedule to another owner", async () => {
    await expect(read("demo", "update public.schedules set account_id = $1 where id = $2", [account.other, schedule.demoDaily])).rejects.toMatchObject(
      permissionDenied,
    );
    await expect(read("demo", "update public.schedules set license_key = 'DEMO-0000-0000-0004' where id = $1", [schedule.key2Weekly])).rejects.toMatchObject(
      permissionDenied,
    );
  });

  it("an authenticated user linked to no account reads and creates no schedule", async () => {
    expect(await read("unlinked", "select id from public.schedules")).toEqual([]);
    await expect(read("unlinked", "insert into public.schedules (license_key, type) values ('DEMO-0000-0000-0001', 'daily')")).rejects.toMatchObject(
      violatesPolicy("schedules"),
    );
  });
});

describe("schedule blocks", () => {
  const addBlock = "insert into public.schedule_blocks (schedule_id, weekday, start_time, end_time) values ($1, $2, $3, $4) returning start_time";

  it("an account holder reads the blocks of their schedules", async () => {
    expect(await read("demo", "select count(*)::int as count from public.schedule_blocks")).toEqual([{ count: 6 }]);
  });

  it("adds, changes and deletes the blocks of their own schedules", async () => {
    await as(sql, "demo", async (tx) => {
      expect(await rows(tx, addBlock, [schedule.demoDaily, null, "13:00", "14:00"])).toEqual([{ start_time: "13:00:00" }]);
      expect(await rows(tx, "update public.schedule_blocks set end_time = '10:00', dynamic_audio = true where id = $1 returning end_time", [block.demoMorning])).toEqual([
        { end_time: "10:00:00" },
      ]);
      expect(await rows(tx, "delete from public.schedule_blocks where id = $1 returning id", [block.key2Monday])).toEqual([{ id: block.key2Monday }]);
    });
  });

  it("every rule that holds for staff holds for them: weekday matches the type, times in range", async () => {
    await expect(read("demo", addBlock, [schedule.demoDaily, "monday", "13:00", "14:00"])).rejects.toMatchObject({
      constraint_name: "block_weekday_matches_schedule_type",
    });
    await expect(read("demo", addBlock, [schedule.key2Weekly, null, "13:00", "14:00"])).rejects.toMatchObject({
      constraint_name: "block_weekday_matches_schedule_type",
    });
    await expect(read("demo", addBlock, [schedule.demoDaily, null, "24:00", "24:00"])).rejects.toMatchObject({
      constraint_name: "block_start_is_before_midnight",
    });
  });

  it("never sees or touches another account's blocks", async () => {
    expect(await read("other", "select id from public.schedule_blocks")).toEqual([]);
    expect(await read("other", "update public.schedule_blocks set end_time = '23:00' where id = $1 returning id", [block.demoMorning])).toEqual([]);
    expect(await read("other", "delete from public.schedule_blocks where id = $1 returning id", [block.demoMorning])).toEqual([]);
    await expect(read("other", addBlock, [schedule.demoDaily, null, "13:00", "14:00"])).rejects.toMatchObject(violatesPolicy("schedule_blocks"));
  });

  it("never tells the type of another account's schedule: the weekday rule, which runs before the policy, reads schedules as the holder", async () => {
    // A daily schedule, a weekly one and one that does not exist, each with a weekday and without:
    // the weekday rule would refuse two of these, naming the type, were it to see them.
    for (const target of [schedule.demoDaily, schedule.key2Weekly, crypto.randomUUID()]) {
      for (const weekday of ["monday", null]) {
        await expect(read("other", addBlock, [target, weekday, "13:00", "14:00"]), `${target} ${weekday}`).rejects.toMatchObject(violatesPolicy("schedule_blocks"));
      }
    }
    await expect(read("demo", addBlock, [schedule.demoDaily, "monday", "13:00", "14:00"])).rejects.toMatchObject({
      constraint_name: "block_weekday_matches_schedule_type",
    });
  });

  it("never moves a block to another schedule", async () => {
    await expect(read("demo", "update public.schedule_blocks set schedule_id = $1 where id = $2", [schedule.key2Weekly, block.demoMorning])).rejects.toMatchObject(
      permissionDenied,
    );
  });
});

describe("block proclamations", () => {
  const play = "insert into public.schedule_block_proclamations (block_id, position, proclamation_id) values ($1, $2, $3) returning position";

  it("an account holder reads what the blocks of their schedules play", async () => {
    expect(await read("demo", "select proclamation_id from public.schedule_block_proclamations where block_id = $1 order by position", [block.demoMorning])).toEqual([
      { proclamation_id: proclamation.abundance },
      { proclamation_id: proclamation.peace },
    ]);
  });

  it("adds, reorders and removes entitled proclamations in their own blocks", async () => {
    await as(sql, "demo", async (tx) => {
      expect(await rows(tx, play, [block.demoMorning, 3, proclamation.clarity])).toEqual([{ position: 3 }]);
      // One statement may swap positions: uniqueness is checked at its end.
      const swapped = await rows(
        tx,
        "update public.schedule_block_proclamations set position = 3 - position where block_id = $1 and position in (1, 2) returning position, proclamation_id",
        [block.demoMorning],
      );
      expect(swapped).toHaveLength(2);
      expect(await rows(tx, "delete from public.schedule_block_proclamations where block_id = $1 and position = 3 returning position", [block.demoMorning])).toEqual([
        { position: 3 },
      ]);
    });
  });

  it("a block may only play a proclamation the account is entitled to", async () => {
    await expect(read("demo", play, [block.demoMorning, 3, proclamation.grounding])).rejects.toMatchObject(violatesPolicy("schedule_block_proclamations"));
    await expect(
      read("demo", "update public.schedule_block_proclamations set proclamation_id = $1 where block_id = $2 and position = 1", [proclamation.grounding, block.demoMorning]),
    ).rejects.toMatchObject(violatesPolicy("schedule_block_proclamations"));
  });

  it("never one with no canonical frequency, even when entitled", async () => {
    await expect(read("demo", play, [block.demoMorning, 3, proclamation.legacyTone])).rejects.toMatchObject(violatesPolicy("schedule_block_proclamations"));
  });

  it("every rule that holds for staff holds for them: positions are unique and start at 1", async () => {
    await expect(read("demo", play, [block.demoMorning, 1, proclamation.clarity])).rejects.toMatchObject({ constraint_name: "block_position_is_unique" });
    await expect(read("demo", play, [block.demoMorning, 0, proclamation.clarity])).rejects.toMatchObject({ constraint_name: "block_position_is_positive" });
  });

  it("never sees or touches another account's blocks, even with a proclamation of their own", async () => {
    expect(await read("other", "select block_id from public.schedule_block_proclamations")).toEqual([]);
    await expect(read("other", play, [block.demoMorning, 3, proclamation.grounding])).rejects.toMatchObject(violatesPolicy("schedule_block_proclamations"));
    expect(await read("other", "update public.schedule_block_proclamations set position = 9 where block_id = $1 returning position", [block.demoMorning])).toEqual([]);
    expect(await read("other", "delete from public.schedule_block_proclamations where block_id = $1 returning position", [block.demoMorning])).toEqual([]);
  });
});

describe("events", () => {
  it("an account holder reads their own account's events, the change they make through the Data API among them", async () => {
    await as(sql, "demo", (tx) => tx`update public.license_keys set alerts_muted = true where key = 'DEMO-0000-0000-0001'`, { commit: true });
    const events = await read("demo", "select type, license_key, account_id from public.events order by position");
    expect(events.every((event) => event.account_id === account.demo)).toBe(true);
    expect(events).toContainEqual({ type: "account.created", license_key: null, account_id: account.demo });
    expect(events.at(-1)).toEqual({ type: "license_key.updated", license_key: "DEMO-0000-0000-0001", account_id: account.demo });
  });

  it("never another account's events, asked for by key or by account", async () => {
    expect(await read("demo", "select id from public.events where license_key = 'DEMO-0000-0000-0004'")).toEqual([]);
    expect(await read("demo", "select id from public.events where account_id = $1", [account.other])).toEqual([]);
    expect((await read("other", "select distinct account_id from public.events")).map((row) => row.account_id)).toEqual([account.other]);
  });

  it("never the account a key left, and never writes an event", async () => {
    await expect(read("demo", "select previous_account_id from public.events")).rejects.toMatchObject(permissionDenied);
    await expect(read("demo", "select * from public.events")).rejects.toMatchObject(permissionDenied);
    await expect(read("demo", "update public.events set type = 'account.updated'")).rejects.toMatchObject(permissionDenied);
    await expect(read("demo", "delete from public.events")).rejects.toMatchObject(permissionDenied);
    await expect(
      read("demo", "insert into public.events (type, account_id, sequence, data) values ('account.updated', $1, 99, '{}')", [account.demo]),
    ).rejects.toMatchObject(permissionDenied);
  });

  it("an authenticated user linked to no account reads no event", async () => {
    expect(await read("unlinked", "select id from public.events")).toEqual([]);
  });
});

describe("internals", () => {
  it("an account holder never sees nonces, the outbox, the stored payloads, nor the event endpoints, their secrets and deliveries", async () => {
    for (const table of ["webhook_nonces", "email_outbox", "schedule_payloads", "event_endpoints", "event_batches", "event_deliveries"]) {
      await expect(read("demo", `select 1 from public.${table}`)).rejects.toMatchObject(permissionDenied);
      await expect(read("demo", `delete from public.${table}`)).rejects.toMatchObject(permissionDenied);
    }
    await expect(read("demo", "select 1 from public.event_delivery_log")).rejects.toMatchObject(permissionDenied);
  });
});

describe("anon", () => {
  it("reads nothing through the Data API: every table refuses", async () => {
    const tables = await database.db.query<{ name: string }>(
      `select format('%I.%I', n.nspname, c.relname) as name
         from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
        where c.relkind in ('r', 'p', 'v', 'm', 'f') and n.nspname = 'public'`,
    );
    expect(tables.length).toBeGreaterThan(10);
    for (const { name } of tables) {
      await expect(read("anon", `select 1 from ${name}`)).rejects.toMatchObject(permissionDenied);
    }
  });
});

describe("an owner's schedule edit reaches the kiosk", () => {
  const edited = scopedDatabase();

  it("a kiosk sees the edit on its next poll, as with a staff edit", async () => {
    await linkAuthUsers(edited.url);
    const { request } = testApp(edited.db);
    const poll = async (headers: Record<string, string> = {}) => {
      const response = await request("/api/v2/licenses/DEMO-0000-0000-0001/schedule", { headers });
      return { status: response.status, etag: response.headers.get("etag"), body: response.status === 200 ? await response.json() : undefined };
    };
    const before = await poll();
    expect(before.body.daily[0]).toMatchObject({ startTime: "06:00", endTime: "09:00" });

    const owner = postgres(edited.url, { max: 1, onnotice: () => {} });
    try {
      await as(owner, "demo", async (tx) => {
        await tx`update public.schedule_blocks set end_time = '09:45' where id = ${block.demoMorning}`;
      }, { commit: true });
    } finally {
      await owner.end();
    }

    const after = await poll({ "if-none-match": before.etag! });
    expect(after.status).toBe(200);
    expect(after.etag).not.toBe(before.etag);
    expect(after.body.daily[0]).toMatchObject({ startTime: "06:00", endTime: "09:45", durationMinutes: 225 });
  });
});

describe("at scale", () => {
  const large = scopedDatabase();

  it("with 10,000 accounts and 100,000 keys, a holder's read of their keys stays an index scan", async () => {
    const owner = postgres(large.url, { max: 1, onnotice: () => {} });
    try {
      await owner.begin(async (tx) => {
        // Bulk data: the payload triggers have nothing to say about keys no schedule reads.
        await tx`set local session_replication_role = replica`;
        await tx`
          insert into public.accounts (id, email, display_name, auth_user_id)
          select ('f0000000-0000-4000-8000-' || lpad(to_hex(n), 12, '0'))::uuid, format('holder%s@example.com', n),
                 format('Holder %s', n), ('e1000000-0000-4000-8000-' || lpad(to_hex(n), 12, '0'))::uuid
            from generate_series(1, 10000) as n`;
        // Ten keys an account: nine linked, one paired by its stored e-mail only.
        await tx`
          insert into public.license_keys (key, account_id, email)
          select format('PLAN-%s-%s-0000', upper(lpad(to_hex(a), 4, '0')), lpad(k::text, 4, '0')),
                 case when k < 9 then ('f0000000-0000-4000-8000-' || lpad(to_hex(a), 12, '0'))::uuid end,
                 format('HOLDER%s@example.com', a)
            from generate_series(1, 10000) as a, generate_series(0, 9) as k`;
      });
      await owner`analyze public.accounts, public.license_keys`;
      const holder = { sub: "e1000000-0000-4000-8000-000000001234", role: "authenticated" };
      const [plan, keys, scans] = await owner.begin(async (tx) => {
        await tx`set local role authenticated`;
        await tx`select set_config('request.jwt.claims', ${JSON.stringify(holder)}, true)`;
        const [{ "QUERY PLAN": plan }] = await tx.unsafe("explain (format json) select key, system_name, active, last_validated_at from public.license_keys");
        const keys = await tx.unsafe("select key from public.license_keys order by key");
        await tx`reset role`;
        // This transaction's own counters, the helpers' reads included.
        const scans = await tx`
          select relname, seq_scan, idx_scan from pg_catalog.pg_stat_xact_user_tables
           where relname in ('accounts', 'license_keys') order by relname`;
        return [plan, [...keys], [...scans]];
      });

      expect(keys).toHaveLength(10);
      // Account 0x1234: nine linked keys and the one paired by e-mail.
      expect(keys.map((row) => row.key)).toContain("PLAN-1234-0009-0000");
      const nodes = planNodes(plan[0].Plan);
      // Through the primary key (an index scan, or a bitmap of one), never a sequential scan.
      const onKeys = nodes.filter((node) => node["Relation Name"] === "license_keys");
      expect(onKeys.map((node) => node["Node Type"])).toEqual([expect.stringMatching(/^(Index Scan|Index Only Scan|Bitmap Heap Scan)$/)]);
      expect(nodes.filter((node) => node["Index Name"] === "license_keys_pkey")).toHaveLength(1);
      expect(scans).toEqual([
        { relname: "accounts", seq_scan: "0", idx_scan: expect.anything() },
        { relname: "license_keys", seq_scan: "0", idx_scan: expect.anything() },
      ]);
    } finally {
      await owner.end();
    }
  });
});

type PlanNode = Record<string, unknown> & { Plans?: PlanNode[] };

/** Every node of an EXPLAIN (FORMAT JSON) plan, depth first. */
function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}
