-- materialized: macro
-- Purpose: Benjamini–Hochberg q-values, the one correction for many tests that compare_groups
-- (over the groups of a comparison) and compare_scores (over its groups' scores) share. `tests`
-- names a relation (a table, a view or a CTE of the calling query) with one row per test:
-- test_id (unique, any type) and p_value (null: no test). The m tests with a p-value are ranked
-- from the smallest; q at rank i is the least p(j) * m / j over the ranks j >= i, capped at 1
-- (tests with equal p-values get the same q, whatever order they are ranked in). Null when
-- p_value is.
-- Grain: one row per test of `tests`.
create or replace macro benjamini_hochberg(tests) as table
with ranked as (
    select
        test_id,
        p_value,
        count(p_value) over () as n_tests,
        row_number() over (order by p_value nulls last, test_id) as test_rank
    from query_table(tests)
)

select
    test_id,
    case when p_value is not null then least(1.0, min(p_value * n_tests / test_rank) over (
        order by test_rank desc rows between unbounded preceding and current row
    )) end as q_value
from ranked
