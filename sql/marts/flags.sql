-- Purpose: every finding: those raised while reading lines (runs resolved through spans), and
-- those derived from several tables (intermediate.int_derived_flags).
-- Grain: one row per finding.
create or replace view flags as
with read_flags as (
    select * from staging.stg_flags
),

span_runs as (
    select span_id, run_id from intermediate.int_span_runs
),

resolved as (
    select read_flags.* replace (coalesce(read_flags.run_id, span_runs.run_id) as run_id)
    from read_flags
    left join span_runs
        on read_flags.run_id is null and read_flags.span_id = span_runs.span_id
)

select * from resolved
union all by name
select * from intermediate.int_derived_flags
