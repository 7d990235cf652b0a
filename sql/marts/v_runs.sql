-- Purpose: every run with how many findings it has, and how many of them are errors.
-- Grain: one row per run (or turn).
create or replace view v_runs as
with runs_ as (
    select * from runs
),

flag_counts as (
    select
        run_id,
        count(*) as n_flags,
        count(*) filter (where severity = 'error') as n_error_flags
    from flags
    where run_id is not null
    group by run_id
)

select
    runs_.*,
    coalesce(flag_counts.n_flags, 0) as n_flags,
    coalesce(flag_counts.n_error_flags, 0) as n_error_flags
from runs_
left join flag_counts on runs_.run_id = flag_counts.run_id
