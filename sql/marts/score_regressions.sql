-- materialized: macro
-- Purpose: each named score of each agent and model on on_day against the baseline_days days
-- before it (null arguments: the latest day with runs, 7 days): compare_scores over the
-- window's runs with a test case (runs of any status), on_day the candidate side. Per case the
-- mean of the score over its baseline-window runs and over its on_day runs; n_cases counts the
-- cases with the score on both sides; p_value is the one-sided Wilcoxon signed-rank test of a
-- drop on the cases' differences, q_value Benjamini–Hochberg over the night's (pair, score)
-- rows. verdict: regressed (q_value < 0.01, latest mean lower), improved, insufficient_evidence
-- (under 10 non-zero differences) or no_change.
-- Grain: one row per agent, model and score name with the score on both sides of a test case.
create or replace macro score_regressions(on_day, baseline_days) as table
with window_sides as (  -- noqa: ST03
    select * from window_runs(on_day, baseline_days)
)

select
    window_.latest_day,
    scores_.agent,
    scores_.model,
    scores_.score_name,
    scores_.n_cases,
    scores_.baseline_mean,
    scores_.candidate_mean as latest_mean,
    scores_.mean_delta,
    scores_.p_value,
    scores_.q_value,
    scores_.verdict,
    scores_.n_nonzero,
    scores_.w_plus,
    scores_.rise_p_value,
    scores_.rise_q_value,
    window_.baseline_start,
    window_.baseline_end
from compare_scores('window_sides') as scores_
cross join comparison_window(on_day, baseline_days) as window_
