-- Add a proclamation and assign it to an account: the account's kiosks list it among their
-- proclamations, and its schedules may play it.
--
-- Replace the values marked "replace" (as written, it adds a demo proclamation to other@example.com):
--   the name, and the HTML content the kiosk shows;
--   the category and group, by name (table categories, table groups);
--   the stored frequency, by Hz (table frequencies). Kiosks are served only the nine canonical
--     frequencies (174, 285, 396, 417, 528, 639, 741, 852, 963 Hz); a proclamation of any other is
--     never served;
--   the e-mail of the account it is assigned to.
-- A value that matches nothing stops the recipe, with nothing added: "null value in column ..."
-- names it (category_id, group_id, frequency_id, or account_id for the e-mail).

with proclamation as (
  insert into public.proclamations (name, content, category_id, group_id, frequency_id)
  values (
    'Gratitude',                                                     -- replace: name
    '<p>I am grateful for this day.</p>',                            -- replace: HTML content
    (select c.id from public.categories as c where c.name = 'Affirmations'),  -- replace: category
    (select g.id from public.groups as g where g.name = 'Morning'),           -- replace: group
    (select f.id from public.frequencies as f where f.hz = 528))              -- replace: frequency (Hz)
  returning id
)
insert into public.account_proclamations (account_id, proclamation_id)
select (select a.id from public.accounts as a
         where lower(a.email) = lower('other@example.com')),         -- replace: the account's e-mail
       p.id
  from proclamation as p
returning account_id, proclamation_id;
