-- Purpose: test cases whose outcome flipped between a steady baseline and the latest day
-- (arguments as for case_outcomes); flaky cases are left out (see v_flaky_cases).
-- Grain: one row per agent, model, test_case_id that flipped.
create or replace macro test_case_flips(on_day, baseline_days) as table
select
    agent,
    model,
    test_case_id,
    direction,
    baseline_status,
    latest_status,
    latest_day,
    baseline_start,
    baseline_end,
    baseline_passes + baseline_fails as baseline_runs,
    latest_run_id,
    baseline_run_id
from case_outcomes(on_day, baseline_days)
where direction is not null and not is_flaky
