-- materialized: macro
-- Purpose: each named score of a comparison, per group: did it fall or rise on the same test
-- cases? `selection` names a relation (a table, a view or a CTE of the calling query) with one
-- row per run: run_id, agent, model (the group; either may be null for every row), side
-- ('baseline' or 'candidate'; null takes no side) and test_case_id. A score counts with its
-- number (scores.value; a label alone does not); a run scored more than once by one name counts
-- the mean of its scores. Per case, the mean of the score over its runs on each side; n_cases
-- counts the cases with the score on both sides, and baseline_mean and candidate_mean are the
-- means of those cases' means. p_value: the one-sided Wilcoxon
-- signed-rank test of a drop on the cases' differences (candidate - baseline, compared at 1e-9:
-- zero differences dropped, ties at their average rank; signed_rank_p), rise_p_value the same
-- test of a rise. q_value and rise_q_value: Benjamini–Hochberg over the selection's (group,
-- score) rows with a p-value (benjamini_hochberg). verdict: insufficient_evidence under 10
-- non-zero differences (where the normal approximation is too lenient: six equal drops give
-- p = 0.007, the exact test no less than 1/64); else regressed when q_value <
-- significance_level() and the candidate mean is lower, improved by the same test of a rise,
-- else no_change. Mean differences are what Braintrust, Langfuse and Weave show; the test says
-- whether the cases agree on the change.
-- Grain: one row per agent, model and score name with the score on both sides of a test case.
create or replace macro compare_scores(selection) as table
-- A run's score is the mean of its rows of that name (a judge that scored each of its spans).
with scored as (
    select
        sides_.agent,
        sides_.model,
        sides_.test_case_id,
        sides_.run_id,
        scores.name as score_name,
        sides_.side = 'candidate' as on_candidate,
        avg(scores.value) as value
    from query_table(selection) as sides_
    inner join scores on sides_.run_id = scores.run_id
    where
        sides_.side in ('baseline', 'candidate')
        and sides_.test_case_id is not null
        and scores.value is not null
        and scores.value between -1e308 and 1e308  -- finite: neither NaN nor infinite
    group by
        sides_.agent, sides_.model, sides_.test_case_id, sides_.run_id, sides_.side, scores.name
),

cases as (
    select
        agent,
        model,
        score_name,
        test_case_id,
        avg(value) filter (where not on_candidate) as baseline_mean,
        avg(value) filter (where on_candidate) as candidate_mean
    from scored
    group by agent, model, score_name, test_case_id
    having
        count(*) filter (where not on_candidate) > 0
        and count(*) filter (where on_candidate) > 0
),

differences as (
    select
        cases.*,
        round(candidate_mean - baseline_mean, 9) as difference
    from cases
),

-- Ranks of the non-zero differences by size, ties at their average rank.
ranked as (
    select
        agent,
        model,
        score_name,
        difference,
        rank() over sizes as first_rank,
        count(*) over (partition by agent, model, score_name, abs(difference)) as n_tied
    from differences
    where difference <> 0
    window sizes as (partition by agent, model, score_name order by abs(difference))
),

signed as (
    select
        agent,
        model,
        score_name,
        count(*) as n_nonzero,
        -- A size tied t times takes the average of its t ranks: the first plus (t - 1) / 2.
        coalesce(sum(first_rank + (n_tied - 1) / 2) filter (where difference > 0), 0) as w_plus,
        -- Each of a group of t tied sizes adds t^2 - 1: the group adds t^3 - t.
        sum((n_tied * n_tied - 1)) as tie_sum
    from ranked
    group by agent, model, score_name
),

means as (
    select
        agent,
        model,
        score_name,
        count(*) as n_cases,
        avg(baseline_mean) as baseline_mean,
        avg(candidate_mean) as candidate_mean
    from differences
    group by agent, model, score_name
),

tested as (
    select
        means.*,
        coalesce(signed.n_nonzero, 0) as n_nonzero,
        signed.w_plus,
        signed_rank_p(signed.w_plus, signed.n_nonzero, signed.tie_sum) as p_value,
        signed_rank_p(
            signed.n_nonzero * (signed.n_nonzero + 1) / 2 - signed.w_plus,
            signed.n_nonzero,
            signed.tie_sum
        ) as rise_p_value
    from means
    left join signed
        on
            means.agent is not distinct from signed.agent
            and means.model is not distinct from signed.model
            and means.score_name = signed.score_name
),

-- Each (group, score) row a test of a drop and one of a rise, adjusted by Benjamini–Hochberg
-- over the selection's rows, as compare_groups adjusts over groups.
tests as (
    select
        tested.*,
        row_number() over (order by tested.agent, tested.model, tested.score_name) as test_id
    from tested
),

drop_tests as (  -- noqa: ST03
    select test_id, p_value from tests
),

rise_tests as (  -- noqa: ST03
    select test_id, rise_p_value as p_value from tests
),

adjusted as (
    select
        tests.* exclude (test_id),
        drops.q_value,
        rises.q_value as rise_q_value
    from tests
    inner join benjamini_hochberg('drop_tests') as drops on tests.test_id = drops.test_id
    inner join benjamini_hochberg('rise_tests') as rises on tests.test_id = rises.test_id
)

select
    agent,
    model,
    score_name,
    n_cases,
    n_nonzero,
    baseline_mean,
    candidate_mean,
    candidate_mean - baseline_mean as mean_delta,
    w_plus,
    p_value,
    q_value,
    rise_p_value,
    rise_q_value,
    case
        when n_nonzero < 10 then 'insufficient_evidence'
        when q_value < significance_level() and candidate_mean < baseline_mean then 'regressed'
        when rise_q_value < significance_level() and candidate_mean > baseline_mean
            then 'improved'
        else 'no_change'
    end as verdict
from adjusted
