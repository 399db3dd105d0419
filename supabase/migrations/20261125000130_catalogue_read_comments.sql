-- Every function carries a comment (sql/README.md): the dashboard shows it, and a reader of
-- schema.sql learns what each one answers without reading its body. The catalogue reads had none.

comment on function cadence.categories_json() is
  'GET /api/v2/categories: every category as {id, name, sortOrder}, ordered by sortOrder; [] when there is none.';
comment on function cadence.groups_json() is
  'GET /api/v2/groups: every group as {id, name, sortOrder}, ordered by sortOrder; [] when there is none.';
comment on function cadence.frequencies_json() is
  'GET /api/v2/frequencies: the nine canonical frequencies (cadence.canonical_frequencies) as {id, name, value}, by id.';
comment on function cadence.color_palettes_json() is
  'GET /api/v2/color-palettes: one palette per canonical frequency, as {solfeggioFrequencyId, colors}.';
comment on function cadence.proclamations_json() is
  'GET /api/v2/proclamations: every served proclamation (its frequency has a canonical id), with its canonical frequency id.';
