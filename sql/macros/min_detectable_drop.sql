-- materialized: macro
-- Purpose: the smallest pass-rate drop a comparison could detect (one-sided, 1% level, 80%
-- power): (z_0.99 + z_0.80) * sqrt(p(1 - p)(1/n0 + 1/n1)), with p the baseline's pass rate
-- smoothed as (passed + 1) / (graded + 2) so that 0 or 100% baselines still have a spread.
-- n0 = baseline graded runs, n1 = latest graded runs. Null when either side has none.
-- Grain: a scalar macro.
create or replace macro min_detectable_drop(baseline_passed, baseline_graded, latest_graded) as
    case
        when coalesce(baseline_graded, 0) > 0 and coalesce(latest_graded, 0) > 0
            then (2.3263478740408408 + 0.8416212335729143) * sqrt(
                (baseline_passed + 1) / (baseline_graded + 2)
                * (1 - (baseline_passed + 1) / (baseline_graded + 2))
                * (1 / baseline_graded + 1 / latest_graded)
            )
    end
