-- materialized: macro
-- Purpose: test cases an agent and model ran regularly in the baseline (the baseline_days days
-- before on_day; null arguments: the latest day with runs, 7 days) and not at all on on_day.
-- Regularly: on at least half of the baseline days on which that agent and model ran at all,
-- so cases that come and go are not listed, and nights on which nothing ran (a weekend) do not
-- count against a case. A pair with no run on on_day lists all its regular cases. Runs of any
-- status count as having run.
-- Grain: one row per agent, model and test_case_id.
create or replace macro missing_test_cases(on_day, baseline_days) as table
with window_ as (
    select * from comparison_window(on_day, baseline_days)
),

runs_ as (
    select
        runs.agent,
        runs.model,
        runs.test_case_id,
        runs.day,
        runs.day = window_.latest_day as on_latest
    from runs
    cross join window_
    where runs.day between window_.baseline_start and window_.latest_day
),

pair_days as (
    select
        agent,
        model,
        count(distinct day) as n_baseline_days
    from runs_
    where not on_latest
    group by agent, model
),

cases as (
    select
        agent,
        model,
        test_case_id,
        count(*) filter (where not on_latest) as baseline_runs,
        count(distinct day) filter (where not on_latest) as n_baseline_days,
        count(*) filter (where on_latest) as latest_runs,
        max(day) filter (where not on_latest) as last_seen_day
    from runs_
    where test_case_id is not null
    group by agent, model, test_case_id
)

select
    cases.agent,
    cases.model,
    cases.test_case_id,
    window_.latest_day,
    cases.baseline_runs,
    cases.n_baseline_days,
    pair_days.n_baseline_days as pair_baseline_days,
    cases.last_seen_day
from cases
inner join pair_days on cases.agent = pair_days.agent and cases.model = pair_days.model
cross join window_
where
    cases.latest_runs = 0
    and cases.n_baseline_days * 2 >= pair_days.n_baseline_days
