-- materialized: macro
-- Purpose: each test case's graded outcomes in a comparison window: the baseline (the
-- baseline_days days before on_day) against on_day (null: the latest day with runs; a null
-- baseline_days: 7), read by compare_cases with on_day as the candidate side. passed = status
-- 'passed'; failed = 'failed' or 'contract_violation'; error, skipped and ungraded runs take no
-- side. A case flipped when its outcome on the two sides differs (direction pass_to_fail or
-- fail_to_pass): by its pass rates (passed at 0.5 or more) when it has more than one graded run
-- on on_day (repeated trials), else by each side's last graded run (compare_cases). is_flaky
-- describes a case whose outcome differs between runs of the baseline (or of the latest day);
-- nothing is left out because of it.
-- Grain: one row per agent, model (the run's), test_case_id with a graded run in the window.
create or replace macro case_outcomes(on_day, baseline_days) as table
with window_ as (
    select * from comparison_window(on_day, baseline_days)
),

window_sides as (  -- noqa: ST03
    select
        run_id,
        agent,
        model,
        test_case_id,
        status,
        started_at,
        case when on_latest then 'candidate' else 'baseline' end as side
    from window_graded_runs(on_day, baseline_days)
)

select
    cases.agent,
    cases.model,
    cases.test_case_id,
    window_.latest_day,
    window_.baseline_start,
    window_.baseline_end,
    cases.baseline_passes,
    cases.baseline_fails,
    cases.candidate_passes as latest_passes,
    cases.candidate_fails as latest_fails,
    cases.baseline_status,
    cases.candidate_status as latest_status,
    cases.is_flaky,
    cases.direction,
    cases.baseline_last_status,
    cases.candidate_last_status as latest_last_status,
    cases.baseline_outcome,
    cases.candidate_outcome as latest_outcome,
    cases.candidate_run_id as latest_run_id,
    cases.baseline_run_id
from compare_cases('window_sides') as cases
cross join window_
