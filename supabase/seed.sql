-- Demo data: README examples, tests and outside checks rely on it exactly.

insert into public.categories (id, name, sort_order) values
  (1, 'Affirmations', 1),
  (2, 'Meditations', 2);

-- sortOrder deliberately not in id order.
insert into public.groups (id, name, sort_order) values
  (1, 'Morning', 2),
  (2, 'Evening', 3),
  (3, 'Anytime', 1);

insert into public.frequencies (id, name, hz) values
  (1, 'Grounding 174 Hz', 174),
  (2, 'Love 528 Hz', 528),
  (3, 'Harmony 639 Hz', 639),
  (4, 'Awakening 741 Hz', 741),
  (5, 'Legacy 936 Hz', 936);

select setval(pg_get_serial_sequence('public.categories', 'id'), (select max(id) from public.categories));
select setval(pg_get_serial_sequence('public.groups', 'id'), (select max(id) from public.groups));
select setval(pg_get_serial_sequence('public.frequencies', 'id'), (select max(id) from public.frequencies));

insert into public.proclamations (id, name, content, category_id, group_id, frequency_id) values
  ('b0000000-0000-4000-8000-000000000001', 'Abundance', '<p>I welcome abundance into my life.</p>', 1, 1, 2),
  ('b0000000-0000-4000-8000-000000000002', 'Peace', '<p>I am calm, and peace flows through me.</p>', 2, 2, 3),
  ('b0000000-0000-4000-8000-000000000003', 'Clarity', '<p>My mind is <strong>clear</strong> and focused.</p>', 1, 3, 4),
  ('b0000000-0000-4000-8000-000000000004', 'Grounding', '<p>I am rooted and safe.</p>', 2, 1, 1),
  ('b0000000-0000-4000-8000-000000000005', 'Legacy Tone', '<p>An old 936 Hz tone.</p>', 2, 3, 5);

insert into public.accounts (id, email, display_name) values
  ('a0000000-0000-4000-8000-000000000001', 'demo@example.com', 'Demo Account'),
  ('a0000000-0000-4000-8000-000000000002', 'other@example.com', 'Other Account'),
  ('a0000000-0000-4000-8000-000000000003', 'legacy@example.com', 'Legacy Account');

insert into public.account_proclamations (account_id, proclamation_id) values
  ('a0000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000001'),
  ('a0000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000002'),
  ('a0000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000003'),
  ('a0000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000005'),
  ('a0000000-0000-4000-8000-000000000002', 'b0000000-0000-4000-8000-000000000004');

insert into public.license_keys (key, account_id, email, active) values
  ('DEMO-0000-0000-0001', 'a0000000-0000-4000-8000-000000000001', 'demo@example.com', true),
  ('DEMO-0000-0000-0002', 'a0000000-0000-4000-8000-000000000001', 'demo@example.com', true),
  ('DEMO-0000-0000-0003', 'a0000000-0000-4000-8000-000000000001', 'demo@example.com', false),
  ('DEMO-0000-0000-0004', 'a0000000-0000-4000-8000-000000000002', 'other@example.com', true),
  ('DEMO-0000-0000-0005', null, 'LEGACY@Example.com', true);

-- Demo schedules. DEMO-0000-0000-0001 reads its account's daily schedule, DEMO-0000-0000-0002 its
-- own weekly one (wednesday 20:00-20:00 is a full 24 hours; sunday 00:00-24:00 the whole day);
-- DEMO-0000-0000-0004 and DEMO-0000-0000-0005 have none (type null).
insert into public.schedules (id, account_id, license_key, type) values
  ('c0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000001', null, 'daily'),
  ('c0000000-0000-4000-8000-000000000002', null, 'DEMO-0000-0000-0002', 'weekly');

insert into public.schedule_blocks (id, schedule_id, weekday, start_time, end_time, dynamic_audio) values
  ('d0000000-0000-4000-8000-000000000001', 'c0000000-0000-4000-8000-000000000001', null, '06:00', '09:00', false),
  ('d0000000-0000-4000-8000-000000000002', 'c0000000-0000-4000-8000-000000000001', null, '12:00', '12:30', true),
  ('d0000000-0000-4000-8000-000000000003', 'c0000000-0000-4000-8000-000000000001', null, '22:00', '06:00', false),
  ('d0000000-0000-4000-8000-000000000004', 'c0000000-0000-4000-8000-000000000002', 'monday', '08:00', '10:00', false),
  ('d0000000-0000-4000-8000-000000000005', 'c0000000-0000-4000-8000-000000000002', 'wednesday', '20:00', '20:00', true),
  ('d0000000-0000-4000-8000-000000000006', 'c0000000-0000-4000-8000-000000000002', 'sunday', '00:00', '24:00', false);

insert into public.schedule_block_proclamations (block_id, position, proclamation_id) values
  ('d0000000-0000-4000-8000-000000000001', 1, 'b0000000-0000-4000-8000-000000000001'),
  ('d0000000-0000-4000-8000-000000000001', 2, 'b0000000-0000-4000-8000-000000000002'),
  ('d0000000-0000-4000-8000-000000000002', 1, 'b0000000-0000-4000-8000-000000000003'),
  ('d0000000-0000-4000-8000-000000000003', 1, 'b0000000-0000-4000-8000-000000000002'),
  ('d0000000-0000-4000-8000-000000000003', 2, 'b0000000-0000-4000-8000-000000000001'),
  ('d0000000-0000-4000-8000-000000000004', 1, 'b0000000-0000-4000-8000-000000000001'),
  ('d0000000-0000-4000-8000-000000000005', 1, 'b0000000-0000-4000-8000-000000000003'),
  ('d0000000-0000-4000-8000-000000000006', 1, 'b0000000-0000-4000-8000-000000000002'),
  ('d0000000-0000-4000-8000-000000000006', 2, 'b0000000-0000-4000-8000-000000000003');
