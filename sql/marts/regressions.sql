-- Purpose: what changed for each agent and model between a baseline (the baseline_days days before
-- on_day; null arguments: the latest day with runs, 7 days) and on_day. Pass rate over graded runs
-- on each side with a two-sided two-proportion z-test (significant: p below significance_level(),
-- 0.01); beside it the exact McNemar test on the test cases graded on both sides with a steady
-- baseline (flaky cases counted apart), and drift: tokens per run, p95 runtime, truncation and
-- contract-violation rates, flag codes seen on on_day and never in the baseline, and cost per run
-- (runs.cost_usd). Runs of any status count too: the error rate (status error over all runs) with a
-- one-sided two-proportion z-test that it rose, and a pair with baseline runs and none on on_day is
-- missing. regressed: a significant pass-rate drop, an error regression or a missing pair; reasons
-- lists which (pass_rate, error_rate, missing).
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

paired as (
    select
        agent,
        model,
        count(*) filter (
            where not is_flaky and baseline_status is not null and latest_status is not null
        ) as n_paired_cases,
        count(*) filter (where not is_flaky and direction = 'pass_to_fail') as n_pass_to_fail,
        count(*) filter (where not is_flaky and direction = 'fail_to_pass') as n_fail_to_pass,
        count(*) filter (where is_flaky) as n_flaky_cases
    from case_outcomes(on_day, baseline_days)
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
        ) as error_p_value
    from sides
),

judged as (
    select
        tested.*,
        coalesce(
            tested.p_value < significance_level()
            and tested.latest_pass_rate < tested.baseline_pass_rate,
            false
        ) as is_regression,
        coalesce(
            tested.error_p_value < significance_level()
            and tested.error_rate_latest > tested.error_rate_baseline,
            false
        ) as is_error_regression,
        tested.baseline_n_runs > 0 and tested.latest_n_runs = 0 as is_missing
    from tested
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
    coalesce(paired.n_paired_cases, 0) as n_paired_cases,
    coalesce(paired.n_pass_to_fail, 0) as n_pass_to_fail,
    coalesce(paired.n_fail_to_pass, 0) as n_fail_to_pass,
    coalesce(paired.n_flaky_cases, 0) as n_flaky_cases,
    -- No case graded on both sides: no paired test (null), rather than a p of 1.
    case when coalesce(paired.n_paired_cases, 0) > 0
         then mcnemar_exact_p(paired.n_pass_to_fail, paired.n_fail_to_pass) end
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
left join paired on judged.agent = paired.agent and judged.model = paired.model
