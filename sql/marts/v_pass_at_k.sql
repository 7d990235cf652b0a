-- materialized: view
-- Purpose: repeated trials: for each day, agent, model and k from 1 to the most graded runs any
-- of its test cases had that day, the unbiased pass@k (the chance that at least one of k runs
-- drawn from a case's n passes: 1 - C(n - c, k) / C(n, k) for c passes) and pass^k (the chance
-- that all k pass: C(c, k) / C(n, k)), each averaged over the cases with n >= k (n_cases).
-- pass@1 and pass^1 are the mean per-case pass rate.
-- Grain: one row per day, agent, model, k.
create or replace view v_pass_at_k as
with per_case as (
    select
        day,
        agent,
        model,
        test_case_id,
        count(*) as n_graded,
        count(*) filter (where status = 'passed') as n_passed
    from runs
    where is_graded(status) and test_case_id is not null
    group by day, agent, model, test_case_id
),

pairs as (
    select
        day,
        agent,
        model,
        max(n_graded) as max_graded
    from per_case
    group by day, agent, model
),

ks as (
    select
        pairs.day,
        pairs.agent,
        pairs.model,
        trials.k
    from pairs
    cross join unnest(generate_series(1, pairs.max_graded)) as trials (k)
)

select
    ks.day,
    ks.agent,
    ks.model,
    ks.k,
    count(*) as n_cases,
    avg(1 - choose_ratio(per_case.n_graded - per_case.n_passed, per_case.n_graded, ks.k))
        as pass_at_k,
    avg(choose_ratio(per_case.n_passed, per_case.n_graded, ks.k)) as pass_hat_k
from ks
inner join per_case
    on
        ks.day = per_case.day
        and ks.agent is not distinct from per_case.agent
        and ks.model is not distinct from per_case.model
        and ks.k <= per_case.n_graded
group by ks.day, ks.agent, ks.model, ks.k
