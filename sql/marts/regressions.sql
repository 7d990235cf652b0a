-- Purpose: what changed for each agent and model between a baseline (the baseline_days days
-- before on_day; null arguments: the latest day with runs, 7 days) and on_day. Pass rate over
-- graded runs on each side with a two-sided two-proportion z-test (significant: p < 0.01);
-- beside it the exact McNemar test on the test cases graded on both sides with a steady
-- baseline (flaky cases counted apart), and drift: tokens per run, p95 runtime, truncation and
-- contract-violation rates, flag codes seen on on_day and never in the baseline.
-- Grain: one row per agent and model with runs on either side.
create or replace macro regressions(on_day, baseline_days) as table
with bounds as (
    select
        coalesce(cast(on_day as date), (select max(day) from runs)) as latest_day,
        cast(coalesce(baseline_days, 7) as integer) as n_days
),

window_ as (
    select
        latest_day,
        cast(latest_day - n_days as date) as baseline_start,
        cast(latest_day - 1 as date) as baseline_end
    from bounds
),

runs_ as (
    select
        runs.run_id,
        runs.agent,
        runs.model,
        runs.status,
        runs.input_tokens + runs.output_tokens as total_tokens,
        runs.agent_runtime_ms,
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
            where not on_latest and status in ('passed', 'failed', 'contract_violation')
        ) as baseline_n_graded,
        count(*) filter (where not on_latest and status = 'passed') as baseline_n_passed,
        count(*) filter (
            where on_latest and status in ('passed', 'failed', 'contract_violation')
        ) as latest_n_graded,
        count(*) filter (where on_latest and status = 'passed') as latest_n_passed,
        avg(total_tokens) filter (where not on_latest) as baseline_tokens_per_run,
        avg(total_tokens) filter (where on_latest) as latest_tokens_per_run,
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
            as p_value
    from sides
)

select
    tested.agent,
    tested.model,
    window_.latest_day,
    window_.baseline_start,
    window_.baseline_end,
    tested.baseline_n_graded,
    tested.baseline_pass_rate,
    tested.latest_n_graded,
    tested.latest_pass_rate,
    tested.latest_pass_rate - tested.baseline_pass_rate as pass_rate_delta,
    tested.p_value,
    coalesce(tested.p_value < 0.01, false) as is_significant,
    pct_change(tested.latest_tokens_per_run, tested.baseline_tokens_per_run)
        as tokens_per_run_pct_change,
    pct_change(tested.latest_runtime_ms_p95, tested.baseline_runtime_ms_p95)
        as agent_runtime_ms_p95_pct_change,
    coalesce(new_codes.new_flag_codes, []::varchar []) as new_flag_codes,
    coalesce(tested.p_value < 0.01 and tested.latest_pass_rate < tested.baseline_pass_rate, false)
        as is_regression,
    tested.baseline_n_passed,
    tested.latest_n_passed,
    tested.baseline_n_runs,
    tested.latest_n_runs,
    tested.baseline_tokens_per_run,
    tested.latest_tokens_per_run,
    tested.baseline_runtime_ms_p95,
    tested.latest_runtime_ms_p95,
    case when tested.baseline_n_runs > 0 then tested.baseline_n_truncated / tested.baseline_n_runs
    end as baseline_truncation_rate,
    case when tested.latest_n_runs > 0 then tested.latest_n_truncated / tested.latest_n_runs
    end as latest_truncation_rate,
    case when tested.baseline_n_runs > 0 then tested.baseline_n_violating / tested.baseline_n_runs
    end as baseline_contract_violation_rate,
    case when tested.latest_n_runs > 0 then tested.latest_n_violating / tested.latest_n_runs
    end as latest_contract_violation_rate,
    coalesce(paired.n_paired_cases, 0) as n_paired_cases,
    coalesce(paired.n_pass_to_fail, 0) as n_pass_to_fail,
    coalesce(paired.n_fail_to_pass, 0) as n_fail_to_pass,
    coalesce(paired.n_flaky_cases, 0) as n_flaky_cases,
    -- No case graded on both sides: no paired test (null), rather than a p of 1.
    case when coalesce(paired.n_paired_cases, 0) > 0
         then mcnemar_exact_p(paired.n_pass_to_fail, paired.n_fail_to_pass) end
        as paired_p_value
from tested
cross join window_
left join new_codes on tested.agent = new_codes.agent and tested.model = new_codes.model
left join paired on tested.agent = paired.agent and tested.model = paired.model
