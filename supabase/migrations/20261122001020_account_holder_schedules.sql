-- Account holders edit the schedules of their account and of their own keys, with their blocks and
-- block proclamations, through the Data API. Every constraint and trigger that keeps a staff edit
-- valid runs for them too; the policies add who may touch which rows, and one rule of their own: a
-- block may only play a proclamation the account is entitled to (and that is served).

-- Payloads are refreshed by triggers that read keys, accounts and schedules an account holder may
-- not read, and write the derived payload table, which they may not touch: those triggers run with
-- their owner's rights, whoever edits. Trigger functions cannot be called directly.
alter function cadence.refresh_after_schedules_change() security definer;
alter function cadence.refresh_after_blocks_change() security definer;
alter function cadence.refresh_after_block_proclamations_change() security definer;

-- Schedules: the owner (a key or the account) is chosen at creation; afterwards only the type
-- changes (the type-change trigger still refuses one that would misfit a block).
grant select (id, license_key, account_id, type, created_at) on public.schedules to authenticated;
grant insert (license_key, account_id, type) on public.schedules to authenticated;
grant update (type) on public.schedules to authenticated;
grant delete on public.schedules to authenticated;
create policy "Account holders can read their own schedules"
  on public.schedules for select to authenticated
  using (account_id = (select cadence.holder_account_id()) or license_key = any ((select cadence.holder_license_keys())::text[]));
create policy "Account holders can create schedules for their account and keys"
  on public.schedules for insert to authenticated
  with check (account_id = (select cadence.holder_account_id()) or license_key = any ((select cadence.holder_license_keys())::text[]));
create policy "Account holders can change their own schedules"
  on public.schedules for update to authenticated
  using (account_id = (select cadence.holder_account_id()) or license_key = any ((select cadence.holder_license_keys())::text[]))
  with check (account_id = (select cadence.holder_account_id()) or license_key = any ((select cadence.holder_license_keys())::text[]));
create policy "Account holders can delete their own schedules"
  on public.schedules for delete to authenticated
  using (account_id = (select cadence.holder_account_id()) or license_key = any ((select cadence.holder_license_keys())::text[]));

-- Blocks of their own schedules; a block stays in the schedule it was created in.
grant select (id, schedule_id, weekday, start_time, end_time, dynamic_audio) on public.schedule_blocks to authenticated;
grant insert (schedule_id, weekday, start_time, end_time, dynamic_audio) on public.schedule_blocks to authenticated;
grant update (weekday, start_time, end_time, dynamic_audio) on public.schedule_blocks to authenticated;
grant delete on public.schedule_blocks to authenticated;
create policy "Account holders can read the blocks of their own schedules"
  on public.schedule_blocks for select to authenticated
  using (schedule_id = any ((select cadence.holder_schedule_ids())::uuid[]));
create policy "Account holders can add blocks to their own schedules"
  on public.schedule_blocks for insert to authenticated
  with check (schedule_id = any ((select cadence.holder_schedule_ids())::uuid[]));
create policy "Account holders can change the blocks of their own schedules"
  on public.schedule_blocks for update to authenticated
  using (schedule_id = any ((select cadence.holder_schedule_ids())::uuid[]))
  with check (schedule_id = any ((select cadence.holder_schedule_ids())::uuid[]));
create policy "Account holders can delete the blocks of their own schedules"
  on public.schedule_blocks for delete to authenticated
  using (schedule_id = any ((select cadence.holder_schedule_ids())::uuid[]));

-- What their blocks play: only proclamations the account is entitled to.
grant select (block_id, position, proclamation_id) on public.schedule_block_proclamations to authenticated;
grant insert (block_id, position, proclamation_id) on public.schedule_block_proclamations to authenticated;
grant update (position, proclamation_id) on public.schedule_block_proclamations to authenticated;
grant delete on public.schedule_block_proclamations to authenticated;
create policy "Account holders can read what their blocks play"
  on public.schedule_block_proclamations for select to authenticated
  using (block_id = any ((select cadence.holder_block_ids())::uuid[]));
create policy "Account holders can add entitled proclamations to their blocks"
  on public.schedule_block_proclamations for insert to authenticated
  with check (block_id = any ((select cadence.holder_block_ids())::uuid[])
              and proclamation_id = any ((select cadence.holder_proclamation_ids())::uuid[]));
create policy "Account holders can change what their blocks play, if entitled"
  on public.schedule_block_proclamations for update to authenticated
  using (block_id = any ((select cadence.holder_block_ids())::uuid[]))
  with check (block_id = any ((select cadence.holder_block_ids())::uuid[])
              and proclamation_id = any ((select cadence.holder_proclamation_ids())::uuid[]));
create policy "Account holders can remove proclamations from their blocks"
  on public.schedule_block_proclamations for delete to authenticated
  using (block_id = any ((select cadence.holder_block_ids())::uuid[]));
