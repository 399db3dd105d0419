import pg from "pg";
import { type PostgresServer, startPostgresServer } from "../support/postgres-server.ts";
import { pushMigrations } from "../support/supabase-migrations.ts";
import { FLEET_KEYS, fleetKey, NAME_FLEET_KEYS, nameFleetKey } from "./scenarios.ts";

/** Runs `work` on one connection to `url`, closed after. */
async function withClient(url: string, work: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

/**
 * The tests' throwaway Postgres 15, prepared as the test harness prepares its template: the
 * Supabase shim, then our migrations and the demo seed through the real Supabase CLI. The bench
 * and the fleet simulation (test/simulate) each add their own keys. `settings` are further server
 * settings (startPostgresServer).
 *
 * @example
 * const database = await migratedDatabase();
 * // ... database.url ...
 * await database.server.stop();
 */
export async function migratedDatabase(settings: Record<string, string> = {}): Promise<{ url: string; server: PostgresServer }> {
  const server = await startPostgresServer(settings);
  await pushMigrations(server.url, { seed: true });
  return { url: server.url, server };
}

/**
 * The migrated database (`migratedDatabase`) with the bench's own fleet of keys (`FLEET_KEYS`).
 *
 * @example
 * const database = await benchDatabase();
 * // ... database.url ...
 * await database.server.stop();
 */
export async function benchDatabase(): Promise<{ url: string; server: PostgresServer }> {
  const database = await migratedDatabase();
  await addFleetKeys(database.url);
  return database;
}

/**
 * Adds the bench's fleet of keys (`FLEET_KEYS`) to the demo account of the database at `url`, and
 * the names fleet (`NAME_FLEET_KEYS` named keys of one account of their own).
 *
 * @example
 * await addFleetKeys(url);
 */
export async function addFleetKeys(url: string): Promise<void> {
  await withClient(url, async (client) => {
    // The demo account's owner: its keys read the account's daily schedule, as DEMO-0000-0000-0001 does.
    await client.query(
      `insert into public.license_keys (key, account_id, email)
       select k, a.id, a.email from unnest($1::text[]) as k, public.accounts as a where a.email = 'demo@example.com'`,
      [Array.from({ length: FLEET_KEYS }, (_, n) => fleetKey(n))],
    );
    // The names fleet: an account of 20,000 keys, each named, for the name-write scenario.
    await client.query("insert into public.accounts (email, display_name) values ('names@example.com', 'Names')");
    await client.query(
      `insert into public.license_keys (key, account_id, email, system_name)
       select k, a.id, a.email, 'Kiosk ' || k from unnest($1::text[]) as k, public.accounts as a where a.email = 'names@example.com'`,
      [Array.from({ length: NAME_FLEET_KEYS }, (_, n) => nameFleetKey(n))],
    );
    // As autovacuum would soon: without statistics the planner takes the table for its 5 demo rows.
    await client.query("analyze public.license_keys");
  });
}

/**
 * An empty database `name` on the cluster of `database`, migrated and seeded from the checkout at
 * `root` (another commit's, for `--against`), with the bench's fleet of keys.
 *
 * @example
 * const url = await checkoutDatabase(database, "bench_327ebed", new URL("file:///tmp/checkout/"));
 */
export async function checkoutDatabase(database: { url: string }, name: string, root: URL): Promise<string> {
  const admin = new URL(database.url);
  admin.pathname = "/template1";
  await withClient(admin.href, (client) => client.query(`create database ${name}`));
  const url = new URL(database.url);
  url.pathname = `/${name}`;
  await pushMigrations(url.href, { seed: true, root });
  await addFleetKeys(url.href);
  return url.href;
}

/**
 * A copy of the prepared database (`create database ... template`), so that every configuration
 * starts from the same rows: the validation scenarios write to `license_keys` tens of thousands of
 * times, and a configuration measured after them on the same database read a bloated table
 * (measured: the entitled read at 61% and 39% of the first configuration's, with no limit on it).
 * Call before anything connects to the prepared database: Postgres copies only an idle template.
 *
 * @example
 * const url = await copyDatabase(database, "bench_redis");
 */
export async function copyDatabase(database: { url: string }, name: string): Promise<string> {
  const template = new URL(database.url);
  const admin = new URL(database.url);
  admin.pathname = "/template1";
  await withClient(admin.href, (client) => client.query(`create database ${name} template ${template.pathname.slice(1)}`));
  const copy = new URL(database.url);
  copy.pathname = `/${name}`;
  return copy.href;
}
