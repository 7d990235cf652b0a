-- materialized: view
-- Purpose: each named score of each agent and model on the latest day against the 7 days before
-- it (`score_regressions(day, n)` for another window): the means over the test cases scored on
-- both sides, the one-sided Wilcoxon signed-rank test of a drop on the cases' differences
-- (p_value), its Benjamini–Hochberg q_value over the night's (pair, score) rows, and the verdict
-- (regressed, improved, insufficient_evidence under 10 non-zero differences, no_change).
-- Grain: one row per agent, model and score name with the score on both sides of a test case.
create or replace view v_score_regressions as
select * from score_regressions(null, 7)
