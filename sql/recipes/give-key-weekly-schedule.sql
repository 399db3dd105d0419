-- Give a license key a weekly schedule: time blocks on given weekdays, each playing its
-- proclamations in order. The key's own schedule wins over its account's; a day with no block is
-- silent. A key has one schedule of its own: this replaces the one it has, blocks and all.
--
-- Replace the values marked "replace" (as written, it gives DEMO-0000-0000-0001 a demo schedule):
--   the license key;
--   the blocks, one row each: weekday (monday .. sunday), start and end (HH:MM, whole minutes; 24:00
--     is midnight at the end of the day; an end at or before the start crosses midnight, and an end
--     equal to the start is a full 24 hours), whether the kiosk turns dynamic audio on during the
--     block, and the names of the proclamations it plays, in order (the same one may appear twice).
--     Use proclamations the key's account is entitled to (add-proclamation-to-account.sql).
-- An unknown key stops the recipe at schedule_license_key_exists, an unknown proclamation name
-- with its name; nothing changes.

do $$
declare
  v_key text := 'DEMO-0000-0000-0001';  -- replace: the license key
  v_schedule_id uuid;
  v_unknown text;
begin
  delete from public.schedules as s where s.license_key = v_key;
  insert into public.schedules (license_key, type) values (v_key, 'weekly') returning id into v_schedule_id;

  with block as materialized (
    select gen_random_uuid() as id, b.*
      from (values  -- replace: the blocks (weekday, start, end, dynamic audio, proclamations in play order)
        ('monday', '09:00'::time, '09:30'::time, false, array['Abundance', 'Clarity']),
        ('friday', '17:00', '18:00', true, array['Peace']),
        ('saturday', '00:00', '24:00', false, array['Clarity'])
      ) as b (weekday, start_time, end_time, dynamic_audio, proclamations)
  ), blocks as (
    insert into public.schedule_blocks (id, schedule_id, weekday, start_time, end_time, dynamic_audio)
    select block.id, v_schedule_id, block.weekday, block.start_time, block.end_time, block.dynamic_audio from block
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
