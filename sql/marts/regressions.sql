-- Purpose: what changed for each agent and model between a baseline (the baseline_days days before
-- on_day; null arguments: the latest day with runs, 7 days) and on_day, and the verdict.
-- Pass rate over graded runs on each side. The test of a drop uses every test case: the
-- one-sided Cochran–Mantel–Haenszel test stratified by test case (cmh_p_value, on the n_strata
-- cases graded on both sides; rise_p_value the other side), else, when no case has both sides or
-- nothing varies, the one-sided two-proportion z-test. q_value and rise_q_value are those
-- p-values adjusted by Benjamini–Hochberg over every pair of on_day, so that many pairs a night
-- do not raise false alarms. p_value and is_significant keep the two-sided unstratified z-test
-- for reference; beside it the exact McNemar test on the cases' last runs (paired_p_value).
-- mde: the smallest drop this night could detect (min_detectable_drop). Drift: tokens per run,
-- p95 runtime, truncation and contract-violation rates, new flag codes, cost per run. Runs of
-- any status count too: the error rate (status error over all runs) with a one-sided
-- two-proportion z-test that it rose, and a pair with baseline runs and none on on_day is
-- missing. regressed: a pass-rate drop with q_value below significance_level() (0.01), an error
-- regression or a missing pair; reasons lists which (pass_rate, error_rate, missing). verdict:
-- regressed; else insufficient_evidence (no graded run on a side, or mde over 0.5); else
-- improved (rise_q_value below the level and a higher rate); else no_change.
-- Grain: one row per agent and model with runs on either side.
create or replace macro regressions(on_day, baseline_days) as table
with window_ as (
    select * from comparison_window(on_day, baseline_days)
),

runs_ as (
    select
        runs.run_id,
        runs.agent,
        runs.model,
        runs.status,
        runs.input_tokens + runs.output_tokens as total_tokens,
        runs.agent_runtime_ms,
        runs.cost_usd,
        runs.day = window_.latest_day as on_latest
    from runs
    cross join window_
    where runs.day between window_.baseline_start and window_.latest_day
),

truncated as (
    select distinct run_id from flags where category = 'truncation' and run_id is not null
),

violating as (
    select distinct run_id from v_contract_violations
),

sides as (
    select
        runs_.agent,
        runs_.model,
        count(*) filter (where not on_latest) as baseline_n_runs,
        count(*) filter (where on_latest) as latest_n_runs,
        count(*) filter (
            where not on_latest and is_graded(status)
        ) as baseline_n_graded,
        count(*) filter (where not on_latest and status = 'passed') as baseline_n_passed,
        count(*) filter (
            where on_latest and is_graded(status)
        ) as latest_n_graded,
        count(*) filter (where on_latest and status = 'passed') as latest_n_passed,
        count(*) filter (where not on_latest and status = 'error') as baseline_n_errors,
        count(*) filter (where on_latest and status = 'error') as latest_n_errors,
        avg(total_tokens) filter (where not on_latest) as baseline_tokens_per_run,
        avg(total_tokens) filter (where on_latest) as latest_tokens_per_run,
        avg(cost_usd) filter (where not on_latest) as baseline_cost_usd_per_run,
        avg(cost_usd) filter (where on_latest) as latest_cost_usd_per_run,
        quantile_cont(agent_runtime_ms, 0.95) filter (where not on_latest)
            as baseline_runtime_ms_p95,
        quantile_cont(agent_runtime_ms, 0.95) filter (where on_latest)
            as latest_runtime_ms_p95,
        count(truncated.run_id) filter (where not on_latest) as baseline_n_truncated,
        count(truncated.run_id) filter (where on_latest) as latest_n_truncated,
        count(violating.run_id) filter (where not on_latest) as baseline_n_violating,
        count(violating.run_id) filter (where on_latest) as latest_n_violating
    from runs_
    left join truncated on runs_.run_id = truncated.run_id
    left join violating on runs_.run_id = violating.run_id
    group by runs_.agent, runs_.model
),

codes as (
    select
        summary.agent,
        summary.model,
        summary.code,
        bool_or(summary.day = window_.latest_day) as on_latest,
        bool_or(summary.day < window_.latest_day) as in_baseline
    from v_flag_summary as summary
    cross join window_
    where summary.day between window_.baseline_start and window_.latest_day
    group by summary.agent, summary.model, summary.code
),

new_codes as (
    select agent, model, list(code order by code) as new_flag_codes
    from codes
    where on_latest and not in_baseline
    group by agent, model
),

cases as (
    select * from case_outcomes(on_day, baseline_days)
),

strata as (
    select
        agent,
        model,
        count(*) filter (
            where baseline_passes + baseline_fails > 0 and latest_passes + latest_fails > 0
        ) as n_strata,
        sum(latest_passes - cmh_expected(
            latest_passes + latest_fails,
            baseline_passes + baseline_fails,
            baseline_passes + latest_passes
        )) as cmh_deviation,
        sum(cmh_variance(
            latest_passes + latest_fails,
            baseline_passes + baseline_fails,
            baseline_passes + latest_passes
        )) as cmh_variance,
        count(*) filter (
            where baseline_last_status is not null and latest_last_status is not null
        ) as n_paired_cases,
        count(*) filter (where direction = 'pass_to_fail') as n_pass_to_fail,
        count(*) filter (where direction = 'fail_to_pass') as n_fail_to_pass,
        count(*) filter (where is_flaky) as n_flaky_cases
    from cases
    group by agent, model
),

tested as (
    select
        sides.*,
        case when baseline_n_graded > 0 then baseline_n_passed / baseline_n_graded end
            as baseline_pass_rate,
        case when latest_n_graded > 0 then latest_n_passed / latest_n_graded end
            as latest_pass_rate,
        two_proportion_p(baseline_n_passed, baseline_n_graded, latest_n_passed, latest_n_graded)
            as p_value,
        case when baseline_n_runs > 0 then baseline_n_errors / baseline_n_runs end
            as error_rate_baseline,
        case when latest_n_runs > 0 then latest_n_errors / latest_n_runs end
            as error_rate_latest,
        two_proportion_p_greater(
            baseline_n_errors, baseline_n_runs, latest_n_errors, latest_n_runs
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
        min_detectable_drop(baseline_n_passed, baseline_n_graded, latest_n_graded) as mde
    from sides
    left join strata on sides.agent = strata.agent and sides.model = strata.model
),

chosen as (
    select
        tested.*,
        coalesce(
            tested.cmh_p_value,
            two_proportion_p_greater(
                tested.latest_n_passed, tested.latest_n_graded,
                tested.baseline_n_passed, tested.baseline_n_graded
            )
        ) as pass_rate_p_value,
        coalesce(
            tested.cmh_rise_p_value,
            two_proportion_p_greater(
                tested.baseline_n_passed, tested.baseline_n_graded,
                tested.latest_n_passed, tested.latest_n_graded
            )
        ) as rise_p_value
    from tested
),

-- Benjamini–Hochberg: rank the m pairs with a p-value from the smallest; q at rank i is the
-- least p(j) * m / j over the ranks j >= i, capped at 1.
ranked as (
    select
        chosen.*,
        count(chosen.pass_rate_p_value) over () as n_drop_tests,
        row_number() over (
            order by chosen.pass_rate_p_value nulls last, chosen.agent, chosen.model
        ) as drop_rank,
        count(chosen.rise_p_value) over () as n_rise_tests,
        row_number() over (
            order by chosen.rise_p_value nulls last, chosen.agent, chosen.model
        ) as rise_rank
    from chosen
),

adjusted as (
    select
        ranked.*,
        case when ranked.pass_rate_p_value is not null then least(1.0, min(
            ranked.pass_rate_p_value * ranked.n_drop_tests / ranked.drop_rank
        ) over (
            order by ranked.drop_rank desc rows between unbounded preceding and current row
        )) end as q_value,
        case when ranked.rise_p_value is not null then least(1.0, min(
            ranked.rise_p_value * ranked.n_rise_tests / ranked.rise_rank
        ) over (
            order by ranked.rise_rank desc rows between unbounded preceding and current row
        )) end as rise_q_value
    from ranked
),

judged as (
    select
        adjusted.*,
        coalesce(
            adjusted.q_value < significance_level()
            and adjusted.latest_pass_rate < adjusted.baseline_pass_rate,
            false
        ) as is_regression,
        coalesce(
            adjusted.rise_q_value < significance_level()
            and adjusted.latest_pass_rate > adjusted.baseline_pass_rate,
            false
        ) as is_improvement,
        coalesce(
            adjusted.error_p_value < significance_level()
            and adjusted.error_rate_latest > adjusted.error_rate_baseline,
            false
        ) as is_error_regression,
        adjusted.baseline_n_runs > 0 and adjusted.latest_n_runs = 0 as is_missing
    from adjusted
)

select
    judged.agent,
    judged.model,
    window_.latest_day,
    window_.baseline_start,
    window_.baseline_end,
    judged.baseline_n_graded,
    judged.baseline_pass_rate,
    judged.latest_n_graded,
    judged.latest_pass_rate,
    judged.latest_pass_rate - judged.baseline_pass_rate as pass_rate_delta,
    judged.p_value,
    coalesce(judged.p_value < significance_level(), false) as is_significant,
    pct_change(judged.latest_tokens_per_run, judged.baseline_tokens_per_run)
        as tokens_per_run_pct_change,
    pct_change(judged.latest_runtime_ms_p95, judged.baseline_runtime_ms_p95)
        as agent_runtime_ms_p95_pct_change,
    coalesce(new_codes.new_flag_codes, []::varchar[]) as new_flag_codes,
    judged.is_regression,
    judged.baseline_n_passed,
    judged.latest_n_passed,
    judged.baseline_n_runs,
    judged.latest_n_runs,
    judged.baseline_tokens_per_run,
    judged.latest_tokens_per_run,
    judged.baseline_runtime_ms_p95,
    judged.latest_runtime_ms_p95,
    case when judged.baseline_n_runs > 0 then judged.baseline_n_truncated / judged.baseline_n_runs
    end as baseline_truncation_rate,
    case when judged.latest_n_runs > 0 then judged.latest_n_truncated / judged.latest_n_runs
    end as latest_truncation_rate,
    case when judged.baseline_n_runs > 0 then judged.baseline_n_violating / judged.baseline_n_runs
    end as baseline_contract_violation_rate,
    case when judged.latest_n_runs > 0 then judged.latest_n_violating / judged.latest_n_runs
    end as latest_contract_violation_rate,
    coalesce(judged.n_paired_cases, 0) as n_paired_cases,
    coalesce(judged.n_pass_to_fail, 0) as n_pass_to_fail,
    coalesce(judged.n_fail_to_pass, 0) as n_fail_to_pass,
    coalesce(judged.n_flaky_cases, 0) as n_flaky_cases,
    -- No case graded on both sides: no paired test (null), rather than a p of 1.
    case when coalesce(judged.n_paired_cases, 0) > 0
         then mcnemar_exact_p(judged.n_pass_to_fail, judged.n_fail_to_pass) end
        as paired_p_value,
    judged.baseline_n_runs as runs_baseline,
    judged.latest_n_runs as runs_latest,
    judged.baseline_n_errors,
    judged.latest_n_errors,
    judged.error_rate_baseline,
    judged.error_rate_latest,
    judged.error_p_value,
    judged.is_error_regression,
    judged.is_missing,
    judged.is_regression or judged.is_error_regression or judged.is_missing as regressed,
    judged.baseline_cost_usd_per_run,
    judged.latest_cost_usd_per_run,
    pct_change(judged.latest_cost_usd_per_run, judged.baseline_cost_usd_per_run)
        as cost_usd_per_run_pct_change,
    judged.n_strata,
    judged.cmh_p_value,
    judged.pass_rate_p_value,
    judged.q_value,
    judged.rise_p_value,
    judged.rise_q_value,
    judged.mde,
    case
        when judged.is_regression or judged.is_error_regression or judged.is_missing
            then 'regressed'
        when judged.latest_n_graded = 0 or judged.mde is null or judged.mde > 0.5
            then 'insufficient_evidence'
        when judged.is_improvement then 'improved'
        else 'no_change'
    end as verdict,
    list_filter(
        [
            case when judged.is_regression then 'pass_rate' end,
            case when judged.is_error_regression then 'error_rate' end,
            case when judged.is_missing then 'missing' end
        ],
        lambda reason: reason is not null
    ) as reasons
from judged
cross join window_
left join new_codes on judged.agent = new_codes.agent and judged.model = new_codes.model
