-- materialized: macro
-- Purpose: `runlake compare` in SQL: the candidate's runs against the baseline's on the same
-- test cases, per group (compare_groups over compare_selection: the CMH test, BH q-values, mde
-- and the verdict, as v_regressions computes them). `sides` names a relation with run_id,
-- is_baseline and is_candidate (one row per chosen run); by_agent and by_model choose the
-- group. Any DuckDB client can call it:
-- with s as (select run_id, model = 'a' as is_baseline, model = 'b' as is_candidate from runs)
-- select * from compare_runs('s', true, false)
-- Grain: one row per group (agent and model, each null unless grouped by) with a chosen run.
create or replace macro compare_runs(sides, by_agent, by_model) as table
with compared_runs as (  -- noqa: ST03
    select * from compare_selection(sides, by_agent, by_model)
)

select * from compare_groups('compared_runs')
