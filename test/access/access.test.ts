import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { scopedDatabase } from "../support/database.ts";

const database = scopedDatabase();

const rollback = new Error("rollback");
const apiRoles = ["anon", "authenticated"] as const;

/**
 * What `authenticated` (an account holder, through Supabase's Data API) may do, decided for every
 * column of every table and view in `public` and `cadence`: the column privileges it holds
 * (select, insert, update; "" for none), and whether it may delete rows. The test below compares
 * the catalog with this list both ways, so a new table or column without a decision fails. The
 * rows a privilege reaches are the policies' business (test/access/account-holder-access.test.ts); a view
 * has none of its own, it runs as its reader (security invoker) under its tables' policies.
 */
const holderAccess: Record<string, { columns: Record<string, string>; delete?: true }> = {
  "public.accounts": {
    columns: {
      id: "select", email: "select", display_name: "select", created_at: "",
      auth_user_id: "", auth_link_attempts: "", auth_link_error: "", auth_link_due_at: "",
      time_zone: "select update", offline_alert_after: "select update", auth_email: "", events_sequence: "",
    },
  },
  "public.license_keys": {
    columns: {
      key: "select", active: "select", system_name: "select", last_validated_at: "select", account_id: "", email: "", created_at: "",
      time_zone: "select update", alerts_muted: "select update", belongs_to: "", system_name_kept: "", system_name_key: "", system_name_capitals_key: "", events_sequence: "",
    },
  },
  "public.account_proclamations": { columns: { account_id: "", proclamation_id: "" } },
  "public.categories": { columns: { id: "select", name: "select", sort_order: "select" } },
  "public.groups": { columns: { id: "select", name: "select", sort_order: "select" } },
  "public.frequencies": { columns: { id: "select", name: "select", hz: "select" } },
  "public.color_palettes": { columns: { canonical_frequency_id: "select", colors: "select" } },
  "public.proclamations": {
    columns: {
      id: "select", name: "select", content: "select", category_id: "select", group_id: "select", frequency_id: "select", created_at: "select",
    },
  },
  "public.schedules": {
    columns: { id: "select", license_key: "select insert", account_id: "select insert", type: "select insert update", created_at: "select" },
    delete: true,
  },
  "public.schedule_blocks": {
    columns: {
      id: "select", schedule_id: "select insert", weekday: "select insert update", start_time: "select insert update",
      end_time: "select insert update", dynamic_audio: "select insert update",
    },
    delete: true,
  },
  "public.schedule_block_proclamations": {
    columns: { block_id: "select insert", position: "select insert update", proclamation_id: "select insert update" },
    delete: true,
  },
  "public.schedule_payloads": { columns: { schedule_id: "", payload: "", version: "" } },
  "public.kiosk_sightings": {
    columns: {
      license_key: "select", last_seen_at: "select", last_seen_ip: "select", schedule_version_held: "select",
      system_name_written: "select", system_name_changes: "select", system_name_changes_since: "select", polls: "select",
    },
  },
  "public.kiosk_status": {
    columns: {
      license_key: "select", account_email: "select", system_name: "select", active: "select", last_validated_at: "select",
      last_seen_at: "select", last_seen_ip: "select", schedule_version_held: "select", schedule_version_current: "select",
      schedule_is_current: "select", state: "select", time_zone: "select", local_time: "select", playing_now: "select", dark_since: "select",
      suspected_copy: "select",
    },
  },
  "public.venue_addresses": {
    columns: {
      id: "select", account_id: "select insert", network: "select insert update", kiosks: "select insert update",
      created_at: "select", created_by: "select", updated_at: "select", updated_by: "select",
    },
    delete: true,
  },
  "public.venue_address_changes": {
    columns: { id: "", venue_address_id: "", account_id: "", change: "", network: "", kiosks: "", changed_at: "", changed_by: "" },
  },
  "public.kiosk_watch": {
    columns: { id: "", blind_after: "", gap_after: "", last_pass_at: "", watching_since: "", blind_since: "" },
  },
  "public.kiosk_outages": {
    columns: {
      id: "select", license_key: "select", dark_since: "select", last_seen_at: "select", alerted_at: "select", back_at: "select",
      recovered_at: "select", account_id: "", block_id: "", alert_email_id: "", recovery_email_id: "", recovery_silent: "",
    },
  },
  "public.seat_watch": {
    columns: {
      id: "", digest_to: "", name_changes_to_flag: "", last_digest_at: "", uneven_polls_to_flag: "", uneven_polls_share: "",
      two_clocks_polls_to_flag: "", two_clocks_ratio: "",
    },
  },
  "public.seat_suspicions": {
    columns: { license_key: "select", rules: "select", first_flagged_at: "select", last_flagged_at: "select", flags: "" },
  },
  "public.suspected_copies": {
    columns: {
      license_key: "", account_email: "", system_name: "", active: "", rules: "", first_flagged_at: "", last_flagged_at: "", flags: "",
      polls_this_hour: "", polls_last_hour: "", uneven_polls_this_hour: "", uneven_polls_last_hour: "", recent_polls: "", last_seen_ip: "",
      system_name_changes: "", alternating_polls_this_hour: "", alternating_polls_last_hour: "",
    },
  },
  "public.kiosk_uptime": {
    columns: { license_key: "select", system_name: "select", outages: "select", downtime: "select", uptime_percent: "select" },
  },
  "public.webhook_nonces": { columns: { nonce: "", expires_at: "" } },
  "public.onboarding_idempotency_keys": {
    columns: {
      source: "", id: "", body_sha256: "", claim_token: "", claimed_until: "", response_status: "", response_body: "",
      created_at: "", expires_at: "",
    },
  },
  "public.events": {
    columns: {
      id: "select", position: "select", type: "select", license_key: "select", account_id: "select", previous_account_id: "",
      sequence: "select", occurred_at: "select", data: "select",
    },
  },
  "public.event_endpoints": {
    columns: { id: "", url: "", description: "", secret: "", previous_secret: "", previous_secret_until: "", event_types: "", batch_size: "", notify_email: "", enabled: "", disabled_at: "", disabled_reason: "", failing_since: "", failures: "", last_error: "", next_attempt_at: "", created_at: "" },
  },
  "public.event_batches": {
    columns: { id: "", endpoint_id: "", created_at: "", attempts: "", last_attempt_at: "", last_status: "", last_error: "", delivered_at: "" },
  },
  "public.event_deliveries": { columns: { id: "", endpoint_id: "", event_id: "", batch_id: "", delivered_at: "", created_at: "", replay: "" } },
  "public.event_delivery_log": {
    columns: { delivery_id: "", event_id: "", type: "", license_key: "", account_id: "", sequence: "", occurred_at: "", endpoint_id: "", url: "", webhook_id: "", replay: "", state: "", attempts: "", last_attempt_at: "", last_status: "", last_error: "", delivered_at: "" },
  },
  "public.email_outbox": {
    columns: {
      id: "", recipient: "", subject: "", text_body: "", html_body: "", status: "", attempts: "", last_error: "",
      next_attempt_at: "", sent_at: "", created_at: "",
    },
  },
};

/** The policies, each named as a sentence; all of them for `authenticated` only. */
const holderPolicies = [
  "public.accounts select: Account holders can read their own account",
  "public.license_keys select: Account holders can read their own license keys",
  "public.categories select: Account holders can read categories",
  "public.groups select: Account holders can read groups",
  "public.frequencies select: Account holders can read stored frequencies",
  "public.color_palettes select: Account holders can read stored colour palettes",
  "public.proclamations select: Account holders can read the proclamations they are entitled to",
  "public.schedules select: Account holders can read their own schedules",
  "public.schedules insert: Account holders can create schedules for their account and keys",
  "public.schedules update: Account holders can change their own schedules",
  "public.schedules delete: Account holders can delete their own schedules",
  "public.schedule_blocks select: Account holders can read the blocks of their own schedules",
  "public.schedule_blocks insert: Account holders can add blocks to their own schedules",
  "public.schedule_blocks update: Account holders can change the blocks of their own schedules",
  "public.schedule_blocks delete: Account holders can delete the blocks of their own schedules",
  "public.schedule_block_proclamations select: Account holders can read what their blocks play",
  "public.schedule_block_proclamations insert: Account holders can add entitled proclamations to their blocks",
  "public.schedule_block_proclamations update: Account holders can change what their blocks play, if entitled",
  "public.schedule_block_proclamations delete: Account holders can remove proclamations from their blocks",
  "public.kiosk_sightings select: Account holders can read the sightings of their own keys",
  "public.venue_addresses select: Account holders can read their own venue addresses",
  "public.venue_addresses insert: Account holders can register venue addresses for their account",
  "public.venue_addresses update: Account holders can change their own venue addresses",
  "public.venue_addresses delete: Account holders can delete their own venue addresses",
  "public.accounts update: Account holders can change their own account's alert settings",
  "public.license_keys update: Account holders can change the alert settings of their keys",
  "public.kiosk_outages select: Account holders can read the outages of their own keys",
  "public.seat_suspicions select: Account holders can read the seat flags of their own keys",
  "public.events select: Account holders can read their own account's events",
];

/** The views `authenticated` reads: each runs as its reader, so its tables' policies apply. */
const holderViews = ["public.kiosk_status", "public.kiosk_uptime"];

/** The functions its policies and views call: the only ones `authenticated` may execute. */
const holderFunctions = [
  "cadence.holder_account_id()",
  "cadence.holder_block_ids()",
  "cadence.holder_license_keys()",
  "cadence.holder_owns_key(text)",
  "cadence.holder_proclamation_ids()",
  "cadence.holder_schedule_ids()",
  // The zone trigger's list, met by a holder setting a zone.
  "cadence.iana_time_zones()",
  "cadence.license_key_offline_after(text)",
  "cadence.license_key_owner(text)",
  "cadence.license_key_playing(text,timestamp with time zone)",
  "cadence.license_key_schedule_version(text)",
  "cadence.license_key_time_zone(text)",
];

/** Every table, view and function we own, enumerated from the catalog so later ones are covered. */
async function ourRelations() {
  return database.db.query<{ name: string; kind: string }>(`
    select format('%I.%I', n.nspname, c.relname) as name, c.relkind::text as kind
    from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where c.relkind in ('r', 'v', 'm', 'p', 'f') and n.nspname in ('public', 'cadence')`);
}

/** What `role` holds on every column and table we own, in the shape of `holderAccess`. */
async function accessOf(role: string) {
  const columns = await database.db.query<{ relation: string; column: string; privileges: string }>(
    `select format('%I.%I', n.nspname, c.relname) as relation, a.attname as column,
            concat_ws(' ', case when has_column_privilege($1, c.oid, a.attnum, 'select') then 'select' end,
                           case when has_column_privilege($1, c.oid, a.attnum, 'insert') then 'insert' end,
                           case when has_column_privilege($1, c.oid, a.attnum, 'update') then 'update' end,
                           case when has_column_privilege($1, c.oid, a.attnum, 'references') then 'references' end) as privileges
       from pg_catalog.pg_class c
       join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      where c.relkind in ('r', 'v', 'm', 'p', 'f') and n.nspname in ('public', 'cadence')`,
    [role],
  );
  const tables = await database.db.query<{ relation: string; privileges: string }>(
    `select format('%I.%I', n.nspname, c.relname) as relation,
            concat_ws(' ', case when has_table_privilege($1, c.oid, 'delete') then 'delete' end,
                           case when has_table_privilege($1, c.oid, 'truncate') then 'truncate' end,
                           case when has_table_privilege($1, c.oid, 'references') then 'references' end,
                           case when has_table_privilege($1, c.oid, 'trigger') then 'trigger' end) as privileges
       from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'v', 'm', 'p', 'f') and n.nspname in ('public', 'cadence')`,
    [role],
  );
  const access: Record<string, { columns: Record<string, string>; delete?: true; other?: string[] }> = {};
  for (const { relation, column, privileges } of columns) {
    (access[relation] ??= { columns: {} }).columns[column] = privileges;
  }
  for (const { relation, privileges } of tables) {
    const entry = (access[relation] ??= { columns: {} });
    const held = privileges.split(" ").filter(Boolean);
    if (held.includes("delete")) entry.delete = true;
    const other = held.filter((privilege) => privilege !== "delete");
    if (other.length > 0) entry.other = other;
  }
  return access;
}

/** The executable functions of `public` and `cadence` for `role`. */
async function executableBy(role: string) {
  const rows = await database.db.query<{ name: string }>(
    `select p.oid::regprocedure::text as name
       from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
      where n.nspname in ('public', 'cadence') and has_function_privilege($1, p.oid, 'execute')
      order by 1`,
    [role],
  );
  return rows.map((row) => row.name);
}

describe("row-level security and privileges", () => {
  it("has row-level security on for every table", async () => {
    const tables = await database.db.query<{ name: string; rls: boolean }>(`
      select format('%I.%I', n.nspname, c.relname) as name, c.relrowsecurity as rls
      from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p') and n.nspname in ('public', 'cadence')`);
    expect(tables.length).toBeGreaterThan(5);
    expect(tables.filter((table) => !table.rls)).toEqual([]);
  });

  it("gives anon no privilege on any table or view", async () => {
    const relations = await ourRelations();
    const granted = [];
    for (const { name } of relations) {
      for (const privilege of ["select", "insert", "update", "delete", "truncate", "references", "trigger"]) {
        const [row] = await database.db.query<{ ok: boolean }>("select has_table_privilege('anon', $1, $2) as ok", [name, privilege]);
        if (row.ok) granted.push(`${privilege} on ${name}`);
      }
    }
    const columns = await accessOf("anon");
    const onColumns = Object.entries(columns).flatMap(([relation, { columns }]) =>
      Object.entries(columns).filter(([, privileges]) => privileges !== "").map(([column]) => `${relation}.${column}`));
    expect([...granted, ...onColumns]).toEqual([]);
  });

  it("gives authenticated exactly the decided privileges on every column of every table: none undecided", async () => {
    expect(await accessOf("authenticated")).toEqual(holderAccess);
  });

  it("has a policy named as a sentence for each verb granted to authenticated, and no other", async () => {
    const policies = await database.db.query<{ policy: string; roles: string; permissive: string }>(`
      select format('%I.%I %s: %s', schemaname, tablename, lower(cmd), policyname) as policy,
             array_to_string(roles, ',') as roles, permissive
        from pg_catalog.pg_policies where schemaname in ('public', 'cadence')`);
    expect(policies.map((row) => row.policy).sort()).toEqual([...holderPolicies].sort());
    expect(policies.filter((row) => row.roles !== "authenticated" || row.permissive !== "PERMISSIVE")).toEqual([]);

    const tables = Object.entries(holderAccess).filter(([relation]) => !holderViews.includes(relation));
    const granted = tables.flatMap(([relation, { columns, delete: deletes }]) => {
      const verbs = new Set(Object.values(columns).flatMap((privileges) => privileges.split(" ").filter(Boolean)));
      if (deletes) verbs.add("delete");
      return [...verbs].map((verb) => `${relation} ${verb}`);
    });
    expect(holderPolicies.map((policy) => policy.split(":")[0]).sort()).toEqual(granted.sort());
  });

  it("exposes views to authenticated only as security invoker, so their tables' policies apply", async () => {
    const views = await database.db.query<{ name: string; invoker: boolean }>(`
      select format('%I.%I', n.nspname, c.relname) as name,
             coalesce('security_invoker=true' = any (c.reloptions) or 'security_invoker=on' = any (c.reloptions), false) as invoker
        from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       where c.relkind in ('v', 'm') and n.nspname in ('public', 'cadence') and has_table_privilege('authenticated', c.oid, 'select')`);
    expect(views).toEqual(holderViews.map((name) => ({ name, invoker: true })));
  });

  it("lets anon execute none of our functions", async () => {
    expect(await executableBy("anon")).toEqual([]);
  });

  it("lets authenticated execute only the functions its policies and views call", async () => {
    expect(await executableBy("authenticated")).toEqual(holderFunctions);
  });

  for (const role of apiRoles) {
    it(`reads no row of any table as ${role} without a linked Auth user, even if select were granted by mistake`, async () => {
      const relations = (await ourRelations()).filter((relation) => relation.kind === "r");
      const sql = postgres(database.url, { max: 1, onnotice: () => {} });
      const visible: string[] = [];
      try {
        for (const { name } of relations) {
          await sql
            .begin(async (tx) => {
              await tx.unsafe(`grant select on ${name} to ${role}`);
              await tx.unsafe(`set local role ${role}`);
              const [row] = await tx.unsafe(`select count(*)::int as count from ${name}`);
              if (row.count > 0) visible.push(`${row.count} rows of ${name}`);
              throw rollback;
            })
            .catch((error) => {
              if (error !== rollback) throw error;
            });
        }
      } finally {
        await sql.end();
      }
      expect(visible).toEqual([]);
    });
  }
});
