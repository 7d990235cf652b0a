-- Purpose: the graded runs of a test case in a comparison window (arguments as for
-- comparison_window): each with passed (status 'passed'; failed and contract_violation are not)
-- and on_latest (the run is on the window's latest day rather than in its baseline). error,
-- skipped and ungraded runs, and runs without a test case, take no side. The one reading of
-- "a case's outcomes" that case_outcomes and case_history share.
-- Grain: one row per graded run with a test_case_id in the window.
create or replace macro window_graded_runs(on_day, baseline_days) as table
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
    runs.status = 'passed' as passed,
    runs.day = window_.latest_day as on_latest
from runs
cross join window_
where
    is_graded(runs.status)
    and runs.test_case_id is not null
    and runs.day between window_.baseline_start and window_.latest_day
