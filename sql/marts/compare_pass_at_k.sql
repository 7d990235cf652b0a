-- materialized: macro
-- Purpose: repeated trials on each side of a comparison: for each group and k from 1 to the
-- most graded runs any counted test case had on a side, the unbiased pass@k (1 - C(n - c, k) /
-- C(n, k) for c passes in n runs) and pass^k (C(c, k) / C(n, k)) of each side, averaged over
-- its cases with n >= k (baseline_n_cases, candidate_n_cases; null when none). Only groups
-- whose cases repeat (some case with more than one graded run on a side). `selection` names a
-- relation as compare_groups reads it.
-- Grain: one row per agent, model, k.
create or replace macro compare_pass_at_k(selection) as table
with per_case as (
    select
        agent,
        model,
        side,
        test_case_id,
        count(*) as n_graded,
        count(*) filter (where status = 'passed') as n_passed
    from query_table(selection)
    where
        is_graded(status)
        and test_case_id is not null
        and side in ('baseline', 'candidate')
    group by agent, model, side, test_case_id
),

repeated as (
    select
        agent,
        model,
        max(n_graded) as max_graded
    from per_case
    group by agent, model
    having max(n_graded) > 1
),

ks as (
    select
        repeated.agent,
        repeated.model,
        trials.k
    from repeated
    cross join unnest(generate_series(1, repeated.max_graded)) as trials (k)
)

select
    ks.agent,
    ks.model,
    ks.k,
    count(*) filter (where per_case.side = 'baseline') as baseline_n_cases,
    count(*) filter (where per_case.side = 'candidate') as candidate_n_cases,
    avg(1 - choose_ratio(per_case.n_graded - per_case.n_passed, per_case.n_graded, ks.k))
        filter (where per_case.side = 'baseline') as baseline_pass_at_k,
    avg(1 - choose_ratio(per_case.n_graded - per_case.n_passed, per_case.n_graded, ks.k))
        filter (where per_case.side = 'candidate') as candidate_pass_at_k,
    avg(choose_ratio(per_case.n_passed, per_case.n_graded, ks.k))
        filter (where per_case.side = 'baseline') as baseline_pass_hat_k,
    avg(choose_ratio(per_case.n_passed, per_case.n_graded, ks.k))
        filter (where per_case.side = 'candidate') as candidate_pass_hat_k
from ks
inner join per_case
    on
        ks.agent is not distinct from per_case.agent
        and ks.model is not distinct from per_case.model
        and ks.k <= per_case.n_graded
group by ks.agent, ks.model, ks.k
