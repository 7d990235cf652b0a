-- materialized: macro
-- Purpose: the runs with a test case in a comparison window (arguments as for
-- comparison_window), any status, each with its side: 'candidate' on the window's latest day,
-- 'baseline' before it. The selection compare_scores and compare_what_changed read for the
-- nightly window (score_regressions, what_changed), and window_graded_runs' runs.
-- Grain: one row per run with a test_case_id in the window.
create or replace macro window_runs(on_day, baseline_days) as table
with window_ as (
    select * from comparison_window(on_day, baseline_days)
)

select
    runs.run_id,
    runs.day,
    runs.agent,
    runs.model,
    runs.test_case_id,
    runs.status,
    runs.started_at,
    case when runs.day = window_.latest_day then 'candidate' else 'baseline' end as side
from runs
cross join window_
where
    runs.day between window_.baseline_start and window_.latest_day
    and runs.test_case_id is not null
