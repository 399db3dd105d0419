/**
 * Supabase's pg_cron, pg_net and Vault as a plain PostgreSQL 15 lacks them, at their boundary: the
 * functions the docs call, with the signatures those extensions declare (pg_cron's
 * `cron.schedule(job_name, schedule, command)`, pg_net's `net.http_post(url, body, params, headers,
 * timeout_milliseconds)`, Vault's `vault.create_secret(new_secret, new_name, ...)` and its
 * `vault.decrypted_secrets` view), each recording what it was asked instead of scheduling, sending
 * or encrypting. So a docs block that sets up jobs runs as written, and a job's command can then be
 * run by hand to see what it would send.
 */
export const SUPABASE_EXTENSIONS_SQL = `
create schema cron;
create table cron.job (jobid bigserial, jobname text unique, schedule text not null, command text not null);
create table cron.job_run_details (runid bigserial, jobid bigint, end_time timestamptz);
create function cron.schedule(job_name text, schedule text, command text) returns bigint language sql as $$
  insert into cron.job (jobname, schedule, command) values (job_name, schedule, command)
  on conflict (jobname) do update set schedule = excluded.schedule, command = excluded.command returning jobid
$$;
create schema net;
create table net.http_request_queue (id bigserial, method text, url text, headers jsonb, body jsonb, timeout_milliseconds integer);
create function net.http_post(url text, body jsonb default '{}', params jsonb default '{}', headers jsonb default '{"Content-Type": "application/json"}', timeout_milliseconds integer default 5000)
returns bigint language sql as $$
  insert into net.http_request_queue (method, url, headers, body, timeout_milliseconds) values ('POST', url, headers, body, timeout_milliseconds) returning id
$$;
create schema vault;
create table vault.secrets (id uuid default gen_random_uuid(), name text unique, secret text);
create view vault.decrypted_secrets as select id, name, secret as decrypted_secret from vault.secrets;
create function vault.create_secret(new_secret text, new_name text default null, new_description text default '', new_key_id uuid default null) returns uuid language sql as $$
  insert into vault.secrets (name, secret) values (new_name, new_secret) returning id
$$;
`;
