-- materialized: macro
-- Purpose: one stratum's (one test case's) variance term of the Cochran–Mantel–Haenszel
-- statistic (hypergeometric, no continuity correction): V = n1 * n0 * m * (N - m) /
-- (N^2 * (N - 1)), names as in cmh_expected. Null when a side is empty.
-- Grain: a scalar macro over one stratum's counts.
create or replace macro cmh_variance(latest_graded, baseline_graded, passed) as
    case
        when latest_graded > 0 and baseline_graded > 0
            then latest_graded * baseline_graded * passed
            * (latest_graded + baseline_graded - passed)
            / (
                (latest_graded + baseline_graded) * (latest_graded + baseline_graded)
                * (latest_graded + baseline_graded - 1)
            )
    end
