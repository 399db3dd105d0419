-- Listening schedules, edited by staff in the Supabase dashboard. Constraints and triggers keep every
-- edit valid and name what went wrong: a schedule has one owner and one type, a block's times are
-- wall-clock minutes, a block has a weekday exactly when its schedule is weekly, and a block's
-- proclamations are ordered and always exist.

create table public.schedules (
  id uuid primary key default gen_random_uuid(),
  license_key text
    constraint schedule_license_key_exists references public.license_keys (key) on update cascade on delete cascade,
  account_id uuid constraint schedule_account_exists references public.accounts (id) on delete cascade,
  type text not null constraint schedule_type_is_daily_or_weekly check (type in ('daily', 'weekly')),
  created_at timestamptz not null default now(),
  constraint schedule_has_exactly_one_owner check (num_nonnulls(license_key, account_id) = 1),
  constraint one_schedule_per_license_key unique (license_key),
  constraint one_schedule_per_account unique (account_id)
);
comment on table public.schedules is
  'A daily or weekly listening schedule of one license key or one account. A key''s own schedule wins over its account''s.';
comment on column public.schedules.license_key is 'Set this or account_id, not both.';
comment on column public.schedules.type is 'daily or weekly. Blocks of a weekly schedule have a weekday; blocks of a daily one have none.';

create table public.schedule_blocks (
  id uuid primary key default gen_random_uuid(),
  schedule_id uuid not null constraint block_schedule_exists references public.schedules (id) on delete cascade,
  weekday text constraint block_weekday_is_monday_to_sunday
    check (weekday in ('monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday')),
  -- `time` accepts 00:00 to 24:00, so an out-of-range time never gets in.
  start_time time not null constraint block_start_is_before_midnight check (start_time < '24:00'),
  end_time time not null,
  dynamic_audio boolean not null default false,
  constraint block_times_are_whole_minutes check (extract(second from start_time) = 0 and extract(second from end_time) = 0)
);
comment on table public.schedule_blocks is
  'A time block of a schedule. An end at or before the start crosses midnight (22:00-06:00); 00:00-24:00 is the whole day.';
comment on column public.schedule_blocks.weekday is 'monday .. sunday for a weekly schedule; empty for a daily one.';
comment on column public.schedule_blocks.end_time is '00:00 to 24:00; an end equal to the start is a full 24 hours.';
comment on column public.schedule_blocks.dynamic_audio is 'The kiosk turns dynamic audio on while the block is active.';
create index schedule_blocks_schedule_id_idx on public.schedule_blocks (schedule_id, start_time);

create table public.schedule_block_proclamations (
  block_id uuid not null
    constraint block_proclamation_block_exists references public.schedule_blocks (id) on delete cascade,
  position integer not null constraint block_position_is_positive check (position >= 1),
  -- Restrict: a proclamation still scheduled cannot be deleted, so no block points to a missing one.
  proclamation_id uuid not null
    constraint block_proclamation_exists references public.proclamations (id) on delete restrict,
  -- Checked at the end of each statement, so one update can swap or renumber positions.
  constraint block_position_is_unique primary key (block_id, position) deferrable initially immediate
);
comment on table public.schedule_block_proclamations is
  'The proclamations a block plays, in position order (1, 2, ...). The same proclamation may appear more than once.';
create index schedule_block_proclamations_proclamation_id_idx on public.schedule_block_proclamations (proclamation_id);

-- Checks a block's weekday against its schedule's type.
create function cadence.check_block_weekday()
returns trigger
language plpgsql
volatile
set search_path = ''
as $$
declare
  v_type text;
begin
  -- FOR SHARE waits for, and blocks, a concurrent change of the schedule's type.
  select s.type into v_type from public.schedules as s where s.id = new.schedule_id for share;
  if v_type = 'weekly' and new.weekday is null then
    raise exception using
      errcode = 'check_violation',
      constraint = 'block_weekday_matches_schedule_type',
      message = format('block %s is in a weekly schedule, so it needs a weekday (monday .. sunday)', new.id);
  elsif v_type = 'daily' and new.weekday is not null then
    raise exception using
      errcode = 'check_violation',
      constraint = 'block_weekday_matches_schedule_type',
      message = format('block %s is in a daily schedule, so its weekday must be empty (not %s)', new.id, new.weekday);
  end if;
  return new;
end
$$;
comment on function cadence.check_block_weekday() is
  'Trigger: a block has a weekday exactly when its schedule is weekly.';

-- Refuses a type change that would leave blocks with a wrong weekday.
create function cadence.check_schedule_type_change()
returns trigger
language plpgsql
volatile
set search_path = ''
as $$
declare
  v_mismatched integer;
begin
  select count(*) into v_mismatched
  from public.schedule_blocks as b
  where b.schedule_id = new.id and (b.weekday is null) = (new.type = 'weekly');
  if v_mismatched > 0 then
    raise exception using
      errcode = 'check_violation',
      constraint = 'block_weekday_matches_schedule_type',
      message = format('schedule %s cannot become %s: %s of its blocks %s', new.id, new.type, v_mismatched,
                       case new.type when 'weekly' then 'have no weekday' else 'have a weekday' end),
      hint = 'Change or delete those blocks first, or create a new schedule.';
  end if;
  return new;
end
$$;
comment on function cadence.check_schedule_type_change() is
  'Trigger: a schedule''s type changes only when every block already fits the new type.';

create trigger block_weekday_matches_schedule_type
  before insert or update of schedule_id, weekday on public.schedule_blocks
  for each row execute function cadence.check_block_weekday();

create trigger schedule_type_change_fits_blocks
  before update of type on public.schedules
  for each row when (old.type is distinct from new.type)
  execute function cadence.check_schedule_type_change();

alter table public.schedules enable row level security;
alter table public.schedule_blocks enable row level security;
alter table public.schedule_block_proclamations enable row level security;

revoke all on public.schedules, public.schedule_blocks, public.schedule_block_proclamations from anon, authenticated;

revoke execute on function cadence.check_block_weekday() from public;
revoke execute on function cadence.check_schedule_type_change() from public;
