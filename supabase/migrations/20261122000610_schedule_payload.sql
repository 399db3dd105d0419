-- The schedule payload a kiosk reads, assembled as JSON in one query. Polls read a stored copy
-- (license_schedule_payloads), which triggers refresh with this function; the API derives the
-- content-based version (and so the ETag) from it.

-- Written for the plan cache, as every edit of a shared schedule runs it once per key: plpgsql keeps
-- the statement's plan across calls in a backend (a `language sql` body is planned again on every
-- call before Postgres 18), and the minute arithmetic is inline rather than in a helper function,
-- which would be planned again too.
create function cadence.schedule_payload(p_key text)
returns json
language plpgsql
stable
set search_path = ''
as $$
begin
  return (
    with schedule as (
      select s.id, s.type
      from public.schedules as s
      -- The key's own schedule wins; coalesce looks for the account's only when there is none.
      where s.id = coalesce(
        (select own.id from public.schedules as own where own.license_key = p_key),
        (select shared.id
         from public.license_keys as k
         join public.accounts as a
           -- The first condition finds the candidate accounts through indexes; key_belongs_to decides.
           on (a.id = k.account_id or lower(a.email) = lower(k.email)) and cadence.key_belongs_to(k, a)
         join public.schedules as shared on shared.account_id = a.id
         where k.key = p_key))
    ),
    day as (
      -- Blocks as served, one array per weekday (null weekday: the daily schedule), in start order.
      select b.weekday,
             json_agg(json_build_object(
               'id', b.id,
               'startTime', to_char(b.start_time, 'HH24:MI'),
               'startMinutes', m.start_minutes,
               'endTime', to_char(b.end_time, 'HH24:MI'),
               'endMinutes', m.end_minutes,
               'overnight', m.end_minutes <= m.start_minutes,
               'durationMinutes', case when m.end_minutes <= m.start_minutes
                                       then m.end_minutes + 1440 - m.start_minutes
                                       else m.end_minutes - m.start_minutes end,
               'dynamicAudio', b.dynamic_audio,
               'proclamationIds', coalesce((select json_agg(p.proclamation_id order by p.position)
                                            from public.schedule_block_proclamations as p
                                            where p.block_id = b.id), '[]')
             ) order by b.start_time, b.end_time, b.id) as blocks
      from schedule
      join public.schedule_blocks as b on b.schedule_id = schedule.id
      -- Minutes from midnight; 24:00 is 1440.
      cross join lateral (
        select (extract(hour from b.start_time) * 60 + extract(minute from b.start_time))::integer as start_minutes,
               (extract(hour from b.end_time) * 60 + extract(minute from b.end_time))::integer as end_minutes
      ) as m
      group by b.weekday
    )
    select json_build_object(
             'type', schedule.type,
             'daily', case when schedule.type = 'daily' then daily.blocks else '[]' end,
             'weekly', case when schedule.type = 'weekly' then json_build_object(
                 'monday', coalesce((select day.blocks from day where day.weekday = 'monday'), '[]'),
                 'tuesday', coalesce((select day.blocks from day where day.weekday = 'tuesday'), '[]'),
                 'wednesday', coalesce((select day.blocks from day where day.weekday = 'wednesday'), '[]'),
                 'thursday', coalesce((select day.blocks from day where day.weekday = 'thursday'), '[]'),
                 'friday', coalesce((select day.blocks from day where day.weekday = 'friday'), '[]'),
                 'saturday', coalesce((select day.blocks from day where day.weekday = 'saturday'), '[]'),
                 'sunday', coalesce((select day.blocks from day where day.weekday = 'sunday'), '[]'))
               else '{}' end,
             'blocks', case when schedule.type = 'daily' then daily.blocks else '[]' end)
    from public.license_keys as k
    left join schedule on true
    cross join lateral (
      select coalesce((select day.blocks from day where day.weekday is null), '[]') as blocks
    ) as daily
    where k.key = p_key
  );
end
$$;
comment on function cadence.schedule_payload(text) is
  'The schedule a license key reads, as {type, daily, weekly, blocks}: the key''s own schedule, else its account''s (cadence.key_belongs_to), else type null. Null for an unknown key.';

revoke execute on function cadence.schedule_payload(text) from public;
grant execute on function cadence.schedule_payload(text) to service_role;
