-- materialized: view
-- Purpose: every run with how many findings it has, and how many of them are errors.
-- Grain: one row per run (or turn).
create or replace view v_runs as
select *
from intermediate.int_runs
