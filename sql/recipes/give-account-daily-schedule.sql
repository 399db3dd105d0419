-- Give an account a daily schedule: the same time blocks every day, each playing its proclamations
-- in order. Every key of the account reads it, except a key with a schedule of its own.
-- An account has one schedule: this replaces the one it has, blocks and all.
--
-- Replace the values marked "replace" (as written, it gives other@example.com a demo schedule):
--   the account's e-mail;
--   the blocks, one row each: start and end (HH:MM, whole minutes; 24:00 is midnight at the end of
--     the day; an end at or before the start crosses midnight, and an end equal to the start is a
--     full 24 hours), whether the kiosk turns dynamic audio on during the block, and the names of
--     the proclamations it plays, in order (the same one may appear twice). Use proclamations the
--     account is entitled to (add-proclamation-to-account.sql).
-- An unknown e-mail or proclamation name stops the recipe with its name, and nothing changes.

do $$
declare
  v_email text := 'other@example.com';  -- replace: the account's e-mail
  v_account_id uuid;
  v_schedule_id uuid;
  v_unknown text;
begin
  select a.id into v_account_id from public.accounts as a where lower(a.email) = lower(v_email);
  if v_account_id is null then
    raise exception 'no account has the e-mail %', v_email;
  end if;

  delete from public.schedules as s where s.account_id = v_account_id;
  insert into public.schedules (account_id, type) values (v_account_id, 'daily') returning id into v_schedule_id;

  with block as materialized (
    select gen_random_uuid() as id, b.*
      from (values  -- replace: the blocks (start, end, dynamic audio, proclamations in play order)
        ('07:00'::time, '08:00'::time, false, array['Grounding']),
        ('21:30', '06:00', true, array['Grounding', 'Grounding'])
      ) as b (start_time, end_time, dynamic_audio, proclamations)
  ), blocks as (
    insert into public.schedule_blocks (id, schedule_id, start_time, end_time, dynamic_audio)
    select block.id, v_schedule_id, block.start_time, block.end_time, block.dynamic_audio from block
  ), plays as (
    select block.id as block_id, p.position, p.name, pr.id as proclamation_id
      from block
     cross join unnest(block.proclamations) with ordinality as p (name, position)
      left join public.proclamations as pr on pr.name = p.name
  ), played as (
    insert into public.schedule_block_proclamations (block_id, position, proclamation_id)
    select plays.block_id, plays.position, plays.proclamation_id from plays where plays.proclamation_id is not null
  )
  select string_agg(distinct plays.name, ', ') into v_unknown from plays where plays.proclamation_id is null;
  if v_unknown is not null then
    raise exception 'no proclamation is named %', v_unknown;
  end if;
end
$$;
