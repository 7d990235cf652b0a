-- materialized: macro
-- Purpose: each test case's graded outcomes on the two sides of a comparison. `selection` names
-- a relation (a table, a view or a CTE of the calling query) with one row per run: run_id,
-- agent, model (the group: either may be null for all of them), side ('baseline' or
-- 'candidate'; null takes no side), test_case_id, status and started_at. passed = status
-- 'passed'; failed = 'failed' or 'contract_violation'; error, skipped and ungraded runs take no
-- side. A case with more than one graded run on the candidate side (repeated trials) is judged
-- by its pass rates: it passed on a side whose rate is at least 0.5 (baseline_outcome,
-- candidate_outcome), so a case that passes 2 of 3 trials on both sides does not flip whichever
-- trial ran last. A case with one graded candidate run is judged by each side's last graded run.
-- A case flipped when its two outcomes differ (direction pass_to_fail or fail_to_pass). is_flaky:
-- the outcome differs between the runs of one side. The one reading of "a case's outcomes" that
-- case_outcomes (the nightly window), compare_groups and `runlake compare` share.
-- Grain: one row per agent, model, test_case_id with a graded run on a side.
create or replace macro compare_cases(selection) as table
with graded as (
    select
        run_id,
        agent,
        model,
        test_case_id,
        started_at,
        status = 'passed' as passed,
        side = 'candidate' as on_candidate
    from query_table(selection)
    where
        is_graded(status)
        and test_case_id is not null
        and side in ('baseline', 'candidate')
),

counts as (
    select
        agent,
        model,
        test_case_id,
        count(*) filter (where not on_candidate and passed) as baseline_passes,
        count(*) filter (where not on_candidate and not passed) as baseline_fails,
        count(*) filter (where on_candidate and passed) as candidate_passes,
        count(*) filter (where on_candidate and not passed) as candidate_fails,
        arg_max(run_id, (started_at, run_id)) filter (where on_candidate) as candidate_run_id,
        arg_max(run_id, (started_at, run_id)) filter (where not on_candidate)
            as baseline_run_id,
        arg_max(passed, (started_at, run_id)) filter (where on_candidate)
            as candidate_last_passed,
        arg_max(passed, (started_at, run_id)) filter (where not on_candidate)
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
            when candidate_passes > 0 and candidate_fails > 0 then 'mixed'
            when candidate_passes > 0 then 'passed'
            when candidate_fails > 0 then 'failed'
        end as candidate_status,
        case
            when baseline_passes + baseline_fails = 0 then null
            when candidate_passes + candidate_fails > 1
                then baseline_passes >= 0.5 * (baseline_passes + baseline_fails)
            else baseline_last_passed
        end as baseline_passed,
        case
            when candidate_passes + candidate_fails > 1
                then candidate_passes >= 0.5 * (candidate_passes + candidate_fails)
            else candidate_last_passed
        end as candidate_passed
    from counts
)

select
    agent,
    model,
    test_case_id,
    baseline_passes,
    baseline_fails,
    candidate_passes,
    candidate_fails,
    baseline_status,
    candidate_status,
    coalesce(baseline_status = 'mixed' or candidate_status = 'mixed', false) as is_flaky,
    case
        when baseline_passed and not candidate_passed then 'pass_to_fail'
        when not baseline_passed and candidate_passed then 'fail_to_pass'
    end as direction,
    case
        when baseline_passed then 'passed'
        when not baseline_passed then 'failed'
    end as baseline_outcome,
    case
        when candidate_passed then 'passed'
        when not candidate_passed then 'failed'
    end as candidate_outcome,
    case
        when baseline_last_passed then 'passed'
        when not baseline_last_passed then 'failed'
    end as baseline_last_status,
    case
        when candidate_last_passed then 'passed'
        when not candidate_last_passed then 'failed'
    end as candidate_last_status,
    candidate_run_id,
    baseline_run_id
from classified
