-- Accounts (owners of license keys), their license keys, and which proclamations each account may play.

create table public.accounts (
  id uuid primary key default gen_random_uuid(),
  email text not null
    constraint account_email_is_valid check (char_length(email) <= 254 and email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'),
  display_name text not null
    constraint account_display_name_length check (char_length(btrim(display_name)) between 1 and 120),
  created_at timestamptz not null default now()
);
comment on table public.accounts is 'Owners of license keys. E-mail is unique regardless of case.';
create unique index account_email_is_unique on public.accounts (lower(email));

create table public.license_keys (
  key text primary key
    constraint license_key_format check (key ~ '^[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$'),
  account_id uuid constraint license_key_account_exists references public.accounts (id) on delete restrict,
  email text not null constraint license_key_email_is_not_blank check (btrim(email) <> ''),
  active boolean not null default true,
  last_validated_at timestamptz,
  system_name text
    constraint system_name_length check (char_length(system_name) between 1 and 40)
    constraint system_name_is_trimmed check (system_name = btrim(system_name)),
  created_at timestamptz not null default now()
);
comment on table public.license_keys is
  'License keys. account_id is the owner link; a key without one belongs to the account whose e-mail equals its stored e-mail.';
comment on column public.license_keys.system_name is 'Set by the kiosk only; unique per account regardless of case.';
create index license_keys_account_id_idx on public.license_keys (account_id);
create index license_keys_email_idx on public.license_keys (lower(email)) where account_id is null;

create table public.account_proclamations (
  account_id uuid not null constraint assignment_account_exists references public.accounts (id) on delete cascade,
  proclamation_id uuid not null
    constraint assignment_proclamation_exists references public.proclamations (id) on delete cascade,
  primary key (account_id, proclamation_id)
);
comment on table public.account_proclamations is 'The proclamations an account is entitled to.';
create index account_proclamations_proclamation_id_idx on public.account_proclamations (proclamation_id);

alter table public.accounts enable row level security;
alter table public.license_keys enable row level security;
alter table public.account_proclamations enable row level security;

revoke all on public.accounts, public.license_keys, public.account_proclamations from anon, authenticated;
