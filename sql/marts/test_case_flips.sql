-- Purpose: test cases that flipped between the baseline and on_day (arguments as for
-- case_outcomes): the baseline's last graded run of the case passed and on_day's last graded run
-- failed (pass_to_fail), or the reverse (fail_to_pass). Every case counts, however its outcome
-- varied within the baseline: baseline_passes and baseline_fails say how steady it was.
-- Grain: one row per agent, model, test_case_id that flipped.
create or replace macro test_case_flips(on_day, baseline_days) as table
select
    agent,
    model,
    test_case_id,
    direction,
    baseline_last_status as baseline_status,
    latest_last_status as latest_status,
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
