-- materialized: macro
-- Purpose: the comparison of a candidate's runs with a baseline's, per group, and the verdict:
-- the statistics `regressions(day, n)` (the nightly window) and `runlake compare` (any two
-- predicates over runs) share. `selection` names a relation (a table, a view or a CTE of the
-- calling query) with one row per run: run_id, agent and model (the group; either may be null
-- for every row), side ('baseline' or 'candidate'; null: counted on neither side), test_case_id,
-- status, started_at, total_tokens, agent_runtime_ms, cost_usd, is_truncated and is_violating.
-- Pass rate over graded runs on each side. The test of a drop uses every test case: the
-- one-sided Cochran–Mantel–Haenszel test stratified by test case (cmh_p_value, on the n_strata
-- cases graded on both sides; rise_p_value the other side), else, when no case has both sides or
-- nothing varies, the one-sided two-proportion z-test. q_value and rise_q_value are those
-- p-values adjusted by Benjamini–Hochberg over every group of the selection
-- (benjamini_hochberg). p_value: the two-sided unstratified z-test, for reference;
-- paired_p_value: exact McNemar on the cases' outcomes (compare_cases). mde: the smallest drop
-- the comparison could detect (min_detectable_drop). The error rate (status error over all runs)
-- with the one-sided Fisher exact test that it rose (error_p_value; one crash after none in n0
-- runs gives n1 / (n0 + n1), significant alone only when n0 is about 100 times n1); a group
-- with baseline runs and no candidate run is missing; the named scores that regressed
-- (compare_scores' verdict; regressed_scores). regressed: a
-- pass-rate drop with q_value below significance_level(), an error regression, a missing group
-- or a regressed score; reasons lists which (pass_rate, error_rate, missing, scores). verdict:
-- regressed; else insufficient_evidence (no graded candidate run, or mde null or over 0.5); else
-- improved (rise_q_value below the level and a higher rate); else no_change.
-- Grain: one row per agent and model of the selection.
create or replace macro compare_groups(selection) as table
with runs_ as (
    select
        run_id,
        agent,
        model,
        status,
        total_tokens,
        agent_runtime_ms,
        cost_usd,
        is_truncated,
        is_violating,
        side = 'baseline' as on_baseline,
        side = 'candidate' as on_candidate
    from query_table(selection)
),

sides as (
    select
        agent,
        model,
        count(*) filter (where on_baseline) as baseline_n_runs,
        count(*) filter (where on_candidate) as candidate_n_runs,
        count(*) filter (where on_baseline and is_graded(status)) as baseline_n_graded,
        count(*) filter (where on_baseline and status = 'passed') as baseline_n_passed,
        count(*) filter (where on_candidate and is_graded(status)) as candidate_n_graded,
        count(*) filter (where on_candidate and status = 'passed') as candidate_n_passed,
        count(*) filter (where on_baseline and status = 'error') as baseline_n_errors,
        count(*) filter (where on_candidate and status = 'error') as candidate_n_errors,
        avg(total_tokens) filter (where on_baseline) as baseline_tokens_per_run,
        avg(total_tokens) filter (where on_candidate) as candidate_tokens_per_run,
        avg(cost_usd) filter (where on_baseline) as baseline_cost_usd_per_run,
        avg(cost_usd) filter (where on_candidate) as candidate_cost_usd_per_run,
        quantile_cont(agent_runtime_ms, 0.95) filter (where on_baseline)
            as baseline_runtime_ms_p95,
        quantile_cont(agent_runtime_ms, 0.95) filter (where on_candidate)
            as candidate_runtime_ms_p95,
        count(*) filter (where on_baseline and is_truncated) as baseline_n_truncated,
        count(*) filter (where on_candidate and is_truncated) as candidate_n_truncated,
        count(*) filter (where on_baseline and is_violating) as baseline_n_violating,
        count(*) filter (where on_candidate and is_violating) as candidate_n_violating
    from runs_
    group by agent, model
),

cases as (
    select * from compare_cases(selection)
),

strata as (
    select
        agent,
        model,
        count(*) filter (
            where baseline_passes + baseline_fails > 0
            and candidate_passes + candidate_fails > 0
        ) as n_strata,
        sum(candidate_passes - cmh_expected(
            candidate_passes + candidate_fails,
            baseline_passes + baseline_fails,
            baseline_passes + candidate_passes
        )) as cmh_deviation,
        sum(cmh_variance(
            candidate_passes + candidate_fails,
            baseline_passes + baseline_fails,
            baseline_passes + candidate_passes
        )) as cmh_variance,
        count(*) filter (
            where baseline_last_status is not null and candidate_last_status is not null
        ) as n_paired_cases,
        count(*) filter (where direction = 'pass_to_fail') as n_pass_to_fail,
        count(*) filter (where direction = 'fail_to_pass') as n_fail_to_pass,
        count(*) filter (where is_flaky) as n_flaky_cases
    from cases
    group by agent, model
),

score_changes as (
    select
        agent,
        model,
        list(score_name order by score_name) as regressed_scores,
        true as is_score_regression
    from compare_scores(selection)
    where verdict = 'regressed'
    group by agent, model
),

tested as (
    select
        sides.*,
        case when baseline_n_graded > 0 then baseline_n_passed / baseline_n_graded end
            as baseline_pass_rate,
        case when candidate_n_graded > 0 then candidate_n_passed / candidate_n_graded end
            as candidate_pass_rate,
        two_proportion_p(
            baseline_n_passed, baseline_n_graded, candidate_n_passed, candidate_n_graded
        ) as p_value,
        case when baseline_n_runs > 0 then baseline_n_errors / baseline_n_runs end
            as error_rate_baseline,
        case when candidate_n_runs > 0 then candidate_n_errors / candidate_n_runs end
            as error_rate_candidate,
        fisher_exact_greater(
            baseline_n_errors, baseline_n_runs, candidate_n_errors, candidate_n_runs
        ) as error_p_value,
        coalesce(strata.n_strata, 0) as n_strata,
        strata.n_paired_cases,
        strata.n_pass_to_fail,
        strata.n_fail_to_pass,
        strata.n_flaky_cases,
        -- CMH z = sum(a - E) / sqrt(sum V); a drop makes z negative, so its p is Phi(z).
        case
            when strata.cmh_variance > 0
                then normal_cdf(strata.cmh_deviation / sqrt(strata.cmh_variance))
        end as cmh_p_value,
        case
            when strata.cmh_variance > 0
                then normal_cdf(0 - strata.cmh_deviation / sqrt(strata.cmh_variance))
        end as cmh_rise_p_value,
        min_detectable_drop(baseline_n_passed, baseline_n_graded, candidate_n_graded) as mde,
        coalesce(score_changes.regressed_scores, []::varchar[]) as regressed_scores,
        coalesce(score_changes.is_score_regression, false) as is_score_regression
    from sides
    left join strata
        on
            sides.agent is not distinct from strata.agent
            and sides.model is not distinct from strata.model
    left join score_changes
        on
            sides.agent is not distinct from score_changes.agent
            and sides.model is not distinct from score_changes.model
),

chosen as (
    select
        tested.*,
        coalesce(
            tested.cmh_p_value,
            two_proportion_p_greater(
                tested.candidate_n_passed, tested.candidate_n_graded,
                tested.baseline_n_passed, tested.baseline_n_graded
            )
        ) as pass_rate_p_value,
        coalesce(
            tested.cmh_rise_p_value,
            two_proportion_p_greater(
                tested.baseline_n_passed, tested.baseline_n_graded,
                tested.candidate_n_passed, tested.candidate_n_graded
            )
        ) as rise_p_value
    from tested
),

-- Each group a test of a drop and one of a rise, adjusted by Benjamini–Hochberg over the
-- groups (test_id: the group's rank by agent and model, which name it).
tests as (
    select
        chosen.*,
        row_number() over (order by chosen.agent, chosen.model) as test_id
    from chosen
),

drop_tests as (  -- noqa: ST03
    select test_id, pass_rate_p_value as p_value from tests
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
),

judged as (
    select
        adjusted.*,
        coalesce(
            adjusted.q_value < significance_level()
            and adjusted.candidate_pass_rate < adjusted.baseline_pass_rate,
            false
        ) as is_regression,
        coalesce(
            adjusted.rise_q_value < significance_level()
            and adjusted.candidate_pass_rate > adjusted.baseline_pass_rate,
            false
        ) as is_improvement,
        coalesce(
            adjusted.error_p_value < significance_level()
            and adjusted.error_rate_candidate > adjusted.error_rate_baseline,
            false
        ) as is_error_regression,
        adjusted.baseline_n_runs > 0 and adjusted.candidate_n_runs = 0 as is_missing
    from adjusted
)

select
    agent,
    model,
    baseline_n_runs,
    candidate_n_runs,
    baseline_n_graded,
    candidate_n_graded,
    baseline_n_passed,
    candidate_n_passed,
    baseline_pass_rate,
    candidate_pass_rate,
    candidate_pass_rate - baseline_pass_rate as pass_rate_delta,
    p_value,
    coalesce(p_value < significance_level(), false) as is_significant,
    n_strata,
    cmh_p_value,
    pass_rate_p_value,
    q_value,
    rise_p_value,
    rise_q_value,
    mde,
    coalesce(n_paired_cases, 0) as n_paired_cases,
    coalesce(n_pass_to_fail, 0) as n_pass_to_fail,
    coalesce(n_fail_to_pass, 0) as n_fail_to_pass,
    coalesce(n_flaky_cases, 0) as n_flaky_cases,
    -- No case graded on both sides: no paired test (null), rather than a p of 1.
    case when coalesce(n_paired_cases, 0) > 0
         then mcnemar_exact_p(n_pass_to_fail, n_fail_to_pass) end
        as paired_p_value,
    baseline_n_errors,
    candidate_n_errors,
    error_rate_baseline,
    error_rate_candidate,
    error_p_value,
    is_regression,
    is_improvement,
    is_error_regression,
    is_missing,
    is_score_regression,
    regressed_scores,
    is_regression or is_error_regression or is_missing or is_score_regression as regressed,
    baseline_tokens_per_run,
    candidate_tokens_per_run,
    pct_change(candidate_tokens_per_run, baseline_tokens_per_run)
        as tokens_per_run_pct_change,
    baseline_cost_usd_per_run,
    candidate_cost_usd_per_run,
    pct_change(candidate_cost_usd_per_run, baseline_cost_usd_per_run)
        as cost_usd_per_run_pct_change,
    baseline_runtime_ms_p95,
    candidate_runtime_ms_p95,
    pct_change(candidate_runtime_ms_p95, baseline_runtime_ms_p95)
        as agent_runtime_ms_p95_pct_change,
    case when baseline_n_runs > 0 then baseline_n_truncated / baseline_n_runs end
        as baseline_truncation_rate,
    case when candidate_n_runs > 0 then candidate_n_truncated / candidate_n_runs end
        as candidate_truncation_rate,
    case when baseline_n_runs > 0 then baseline_n_violating / baseline_n_runs end
        as baseline_contract_violation_rate,
    case when candidate_n_runs > 0 then candidate_n_violating / candidate_n_runs end
        as candidate_contract_violation_rate,
    case
        when is_regression or is_error_regression or is_missing or is_score_regression
            then 'regressed'
        when candidate_n_graded = 0 or mde is null or mde > 0.5 then 'insufficient_evidence'
        when is_improvement then 'improved'
        else 'no_change'
    end as verdict,
    list_filter(
        [
            case when is_regression then 'pass_rate' end,
            case when is_error_regression then 'error_rate' end,
            case when is_missing then 'missing' end,
            case when is_score_regression then 'scores' end
        ],
        lambda reason: reason is not null
    ) as reasons
from judged
