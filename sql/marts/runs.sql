-- materialized: view
-- stored: runs
-- partition: week
-- Purpose: every run or turn as the warehouse serves it: the line's own fields, with the model,
-- token totals and runtime taken from the run's spans where the line has none.
-- Grain: one row per run (or turn of a multi-turn session).
create or replace view runs as
select * exclude (n_flags, n_error_flags)
from intermediate.int_runs
