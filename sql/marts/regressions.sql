-- materialized: macro
-- Purpose: what changed for each agent and model between a baseline (the baseline_days days before
-- on_day; null arguments: the latest day with runs, 7 days) and on_day, and the verdict.
-- Pass rate over graded runs on each side. The test of a drop uses every test case: the
-- one-sided Cochran–Mantel–Haenszel test stratified by test case (cmh_p_value, on the n_strata
-- cases graded on both sides; rise_p_value the other side), else, when no case has both sides or
-- nothing varies, the one-sided two-proportion z-test. q_value and rise_q_value are those
-- p-values adjusted by Benjamini–Hochberg over every pair of on_day, so that many pairs a night
-- do not raise false alarms. p_value and is_significant keep the two-sided unstratified z-test
-- for reference; beside it the exact McNemar test on the cases' outcomes (paired_p_value; a
-- case with repeated trials on on_day judged by its pass rates, compare_cases).
-- mde: the smallest drop this night could detect (min_detectable_drop). Drift: tokens per run,
-- p95 runtime, truncation and contract-violation rates, new flag codes, cost per run. Runs of
-- any status count too: the error rate (status error over all runs) with the one-sided Fisher
-- exact test that it rose, and a pair with baseline runs and none on on_day is missing; the
-- named scores that fell on the same cases (score_regressions: regressed_scores). regressed: a
-- pass-rate drop with q_value below significance_level() (0.01), an error regression, a
-- missing pair or a regressed score; reasons lists which (pass_rate, error_rate, missing,
-- scores). verdict:
-- regressed; else insufficient_evidence (no graded run on a side, or mde over 0.5); else
-- improved (rise_q_value below the level and a higher rate); else no_change.
-- The statistics are compare_groups' over the window's runs, on_day the candidate side.
-- Grain: one row per agent and model with runs on either side.
create or replace macro regressions(on_day, baseline_days) as table
with window_ as (
    select * from comparison_window(on_day, baseline_days)
),

window_sides as (  -- noqa: ST03
    select
        facts.run_id,
        facts.agent,
        facts.model,
        facts.test_case_id,
        facts.status,
        facts.started_at,
        facts.total_tokens,
        facts.agent_runtime_ms,
        facts.cost_usd,
        facts.is_truncated,
        facts.is_violating,
        case when facts.day = window_.latest_day then 'candidate' else 'baseline' end as side
    from compared_run_facts() as facts
    cross join window_
    where facts.day between window_.baseline_start and window_.latest_day
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
)

select
    groups.agent,
    groups.model,
    window_.latest_day,
    window_.baseline_start,
    window_.baseline_end,
    groups.baseline_n_graded,
    groups.baseline_pass_rate,
    groups.candidate_n_graded as latest_n_graded,
    groups.candidate_pass_rate as latest_pass_rate,
    groups.pass_rate_delta,
    groups.p_value,
    groups.is_significant,
    groups.tokens_per_run_pct_change,
    groups.agent_runtime_ms_p95_pct_change,
    coalesce(new_codes.new_flag_codes, []::varchar[]) as new_flag_codes,
    groups.is_regression,
    groups.baseline_n_passed,
    groups.candidate_n_passed as latest_n_passed,
    groups.baseline_n_runs,
    groups.candidate_n_runs as latest_n_runs,
    groups.baseline_tokens_per_run,
    groups.candidate_tokens_per_run as latest_tokens_per_run,
    groups.baseline_runtime_ms_p95,
    groups.candidate_runtime_ms_p95 as latest_runtime_ms_p95,
    groups.baseline_truncation_rate,
    groups.candidate_truncation_rate as latest_truncation_rate,
    groups.baseline_contract_violation_rate,
    groups.candidate_contract_violation_rate as latest_contract_violation_rate,
    groups.n_paired_cases,
    groups.n_pass_to_fail,
    groups.n_fail_to_pass,
    groups.n_flaky_cases,
    groups.paired_p_value,
    groups.baseline_n_runs as runs_baseline,
    groups.candidate_n_runs as runs_latest,
    groups.baseline_n_errors,
    groups.candidate_n_errors as latest_n_errors,
    groups.error_rate_baseline,
    groups.error_rate_candidate as error_rate_latest,
    groups.error_p_value,
    groups.is_error_regression,
    groups.is_missing,
    groups.is_score_regression,
    groups.regressed_scores,
    groups.regressed,
    groups.baseline_cost_usd_per_run,
    groups.candidate_cost_usd_per_run as latest_cost_usd_per_run,
    groups.cost_usd_per_run_pct_change,
    groups.n_strata,
    groups.cmh_p_value,
    groups.pass_rate_p_value,
    groups.q_value,
    groups.rise_p_value,
    groups.rise_q_value,
    groups.mde,
    groups.verdict,
    groups.reasons
from compare_groups('window_sides') as groups
cross join window_
left join new_codes on groups.agent = new_codes.agent and groups.model = new_codes.model
