-- materialized: macro
-- Purpose: each test case's graded history in a comparison window (arguments as for
-- case_outcomes): its passes and graded runs in the baseline and on on_day; surprise_p, the
-- probability of at most latest_passed passes in latest_graded runs when each passes with the
-- baseline's smoothed rate (baseline_passed + 1) / (baseline_graded + 2) (the binomial CDF; null
-- without a latest graded run), so a case that always passed and now fails is surprising and
-- one that comes and goes is not; flip_rate, the share of adjacent graded runs (by started_at)
-- whose outcome differs (null below 2 runs); the outcome history as ✓ and ✗ (baseline, then
-- on_day after ' | '); on_day's last graded run and the last passing run of the window.
-- Grain: one row per agent, model, test_case_id with a graded run in the window.
create or replace macro case_history(on_day, baseline_days) as table
with window_ as (
    select * from comparison_window(on_day, baseline_days)
),

graded as (
    select * from window_graded_runs(on_day, baseline_days)
),

ordered as (
    select
        graded.*,
        lag(graded.passed) over (
            partition by graded.agent, graded.model, graded.test_case_id
            order by graded.started_at, graded.run_id
        ) as previous_passed
    from graded
),

counts as (
    select
        agent,
        model,
        test_case_id,
        count(*) filter (where not on_latest) as baseline_graded,
        count(*) filter (where not on_latest and passed) as baseline_passed,
        count(*) filter (where on_latest) as latest_graded,
        count(*) filter (where on_latest and passed) as latest_passed,
        count(*) as n_graded,
        count(*) filter (where previous_passed <> passed) as n_changes,
        string_agg(case when passed then '✓' else '✗' end, '' order by started_at, run_id)
            filter (where not on_latest) as baseline_history,
        string_agg(case when passed then '✓' else '✗' end, '' order by started_at, run_id)
            filter (where on_latest) as latest_history,
        arg_max(run_id, (started_at, run_id)) filter (where on_latest) as latest_run_id,
        arg_max(run_id, (started_at, run_id)) filter (where passed) as last_passed_run_id
    from ordered
    group by agent, model, test_case_id
)

select
    counts.agent,
    counts.model,
    counts.test_case_id,
    window_.latest_day,
    counts.baseline_graded,
    counts.baseline_passed,
    counts.latest_graded,
    counts.latest_passed,
    case
        when counts.latest_graded > 0
            then binomial_cdf(
                counts.latest_passed,
                counts.latest_graded,
                (counts.baseline_passed + 1) / (counts.baseline_graded + 2)
            )
    end as surprise_p,
    case
        when counts.n_graded >= 2 then counts.n_changes / (counts.n_graded - 1)
    end as flip_rate,
    coalesce(counts.baseline_history, '') || ' | ' || coalesce(counts.latest_history, '')
        as outcome_history,
    counts.latest_run_id,
    counts.last_passed_run_id,
    window_.baseline_start,
    window_.baseline_end
from counts
cross join window_
