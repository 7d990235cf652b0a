-- Purpose: each test case's graded outcomes in a comparison window: the baseline (the
-- baseline_days days before on_day) against on_day (null: the latest day with runs; a null
-- baseline_days: 7). passed = status 'passed'; failed = 'failed' or 'contract_violation';
-- error, skipped and ungraded runs take no side. A case flipped when the baseline's last graded
-- run and the latest day's last graded run went different ways (direction pass_to_fail or
-- fail_to_pass). is_flaky describes a case whose outcome differs between runs of the baseline
-- (or of the latest day); nothing is left out because of it.
-- Grain: one row per agent, model (the run's), test_case_id with a graded run in the window.
create or replace macro case_outcomes(on_day, baseline_days) as table
with window_ as (
    select * from comparison_window(on_day, baseline_days)
),

graded as (
    select * from window_graded_runs(on_day, baseline_days)
),

counts as (
    select
        agent,
        model,
        test_case_id,
        count(*) filter (where not on_latest and passed) as baseline_passes,
        count(*) filter (where not on_latest and not passed) as baseline_fails,
        count(*) filter (where on_latest and passed) as latest_passes,
        count(*) filter (where on_latest and not passed) as latest_fails,
        arg_max(run_id, (started_at, run_id)) filter (where on_latest) as latest_run_id,
        arg_max(run_id, (started_at, run_id)) filter (where not on_latest) as baseline_run_id,
        arg_max(passed, (started_at, run_id)) filter (where on_latest) as latest_last_passed,
        arg_max(passed, (started_at, run_id)) filter (where not on_latest)
            as baseline_last_passed
    from graded
    group by agent, model, test_case_id
),

classified as (
    select
        counts.*,
        case
            when baseline_passes > 0 and baseline_fails > 0 then 'mixed'
            when baseline_passes > 0 then 'passed'
            when baseline_fails > 0 then 'failed'
        end as baseline_status,
        case
            when latest_passes > 0 and latest_fails > 0 then 'mixed'
            when latest_passes > 0 then 'passed'
            when latest_fails > 0 then 'failed'
        end as latest_status
    from counts
)

select
    classified.agent,
    classified.model,
    classified.test_case_id,
    window_.latest_day,
    window_.baseline_start,
    window_.baseline_end,
    classified.baseline_passes,
    classified.baseline_fails,
    classified.latest_passes,
    classified.latest_fails,
    classified.baseline_status,
    classified.latest_status,
    coalesce(classified.baseline_status = 'mixed' or classified.latest_status = 'mixed', false)
        as is_flaky,
    case
        when classified.baseline_last_passed and not classified.latest_last_passed
            then 'pass_to_fail'
        when not classified.baseline_last_passed and classified.latest_last_passed
            then 'fail_to_pass'
    end as direction,
    case
        when classified.baseline_last_passed then 'passed'
        when not classified.baseline_last_passed then 'failed'
    end as baseline_last_status,
    case
        when classified.latest_last_passed then 'passed'
        when not classified.latest_last_passed then 'failed'
    end as latest_last_status,
    classified.latest_run_id,
    classified.baseline_run_id
from classified
cross join window_
