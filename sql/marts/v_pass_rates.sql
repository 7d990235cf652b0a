-- materialized: view
-- Purpose: pass rates with their Wilson 95% interval; pass_rate = passed / graded, where
-- graded = passed + failed + contract_violation; error, skipped and ungraded runs are counted
-- apart and never as passed.
-- Grain: one row per day, agent, model.
create or replace view v_pass_rates as
with runs_ as (
    select day, agent, model, status from runs
),

counts as (
    select
        day,
        agent,
        model,
        count(*) as n_runs,
        count(*) filter (where is_graded(status)) as n_graded,
        count(*) filter (where status = 'passed') as n_passed,
        count(*) filter (where status = 'failed') as n_failed,
        count(*) filter (where status = 'contract_violation') as n_contract_violations,
        count(*) filter (where status = 'error') as n_errors,
        count(*) filter (where status = 'skipped') as n_skipped,
        count(*) filter (where status = 'ungraded') as n_ungraded
    from runs_
    group by day, agent, model
)

select
    *,
    case when n_graded > 0 then n_passed / n_graded end as pass_rate,
    wilson_low(n_passed, n_graded) as pass_rate_low,
    wilson_high(n_passed, n_graded) as pass_rate_high
from counts
