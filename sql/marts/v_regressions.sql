-- materialized: view
-- Purpose: what got worse (or better) on the latest day against the 7 days before it, per agent
-- and model (`regressions(day, n)` for another window), and the verdict (regressed, improved,
-- no_change, insufficient_evidence). Pass rate tested on the same test cases: the one-sided
-- Cochran–Mantel–Haenszel test stratified by case (n_strata, cmh_p_value; rise_p_value the
-- other side), else the one-sided two-proportion z-test (pass_rate_p_value); q_value and
-- rise_q_value are Benjamini–Hochberg adjusted over the night's pairs; regressed on pass rate
-- when q_value < 0.01 and lower. mde: the smallest drop the night could detect. p_value and
-- is_significant: the two-sided unstratified z-test, for reference; paired_p_value: exact
-- McNemar on the cases' outcomes (by pass rate where the latest day repeats a case). Error rate
-- (one-sided Fisher exact test), missing pairs, named scores that fell (regressed_scores,
-- v_score_regressions), and drift in tokens, runtime, cost, truncations, contract violations
-- and new flag codes.
-- Grain: one row per agent and model with runs on the latest day or in its baseline.
create or replace view v_regressions as
select * from regressions(null, 7)
