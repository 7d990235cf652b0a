-- materialized: macro
-- Purpose: the graded runs of a test case in a comparison window (arguments as for
-- comparison_window): each with passed (status 'passed'; failed and contract_violation are not)
-- and on_latest (the run is on the window's latest day rather than in its baseline). error,
-- skipped and ungraded runs, and runs without a test case, take no side. The one reading of
-- "a case's outcomes" that case_outcomes and case_history share.
-- Grain: one row per graded run with a test_case_id in the window.
create or replace macro window_graded_runs(on_day, baseline_days) as table
select
    run_id,
    day,
    agent,
    model,
    test_case_id,
    status,
    started_at,
    status = 'passed' as passed,
    side = 'candidate' as on_latest
from window_runs(on_day, baseline_days)
where is_graded(status)
