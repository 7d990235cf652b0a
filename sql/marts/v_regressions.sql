-- Purpose: what got worse (or better) on the latest day against the 7 days before it, per agent
-- and model (`regressions(day, n)` for another window): pass rate with a two-proportion z-test
-- (is_significant: p < 0.01; is_regression: significant and lower), the paired McNemar test on
-- steady test cases (null when no case was graded on both sides), flaky cases apart, and drift
-- in tokens, runtime, truncations, contract violations and new flag codes.
-- Grain: one row per agent and model with runs on the latest day or in its baseline.
create or replace view v_regressions as
select * from regressions(null, 7)
