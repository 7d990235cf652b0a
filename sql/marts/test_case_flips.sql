-- materialized: macro
-- Purpose: test cases that flipped between the baseline and on_day (arguments as for
-- case_outcomes): the case passed in the baseline and failed on on_day (pass_to_fail), or the
-- reverse (fail_to_pass). A case with more than one graded run on on_day (repeated trials) is
-- judged on each side by its pass rate (passed at 0.5 or more), so a case passing 2 of 3 trials
-- on both sides never flips; a case with one graded run on on_day by each side's last graded
-- run. baseline_status and latest_status are those outcomes; baseline_passes, baseline_fails,
-- latest_passes and latest_fails say how steady the case was.
-- Grain: one row per agent, model, test_case_id that flipped.
create or replace macro test_case_flips(on_day, baseline_days) as table
select
    agent,
    model,
    test_case_id,
    direction,
    baseline_outcome as baseline_status,
    latest_outcome as latest_status,
    latest_day,
    baseline_start,
    baseline_end,
    baseline_passes + baseline_fails as baseline_runs,
    latest_run_id,
    baseline_run_id,
    baseline_passes,
    baseline_fails,
    latest_passes,
    latest_fails
from case_outcomes(on_day, baseline_days)
where direction is not null
