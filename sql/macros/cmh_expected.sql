-- materialized: macro
-- Purpose: one stratum's (one test case's) share of the Cochran–Mantel–Haenszel statistic: the
-- passes the latest side would expect, E = n1 * m / N, where n1 = latest graded runs, n0 =
-- baseline graded runs, m = passes on both sides and N = n0 + n1. Null when a side is empty.
-- Grain: a scalar macro over one stratum's counts.
create or replace macro cmh_expected(latest_graded, baseline_graded, passed) as
    case
        when latest_graded > 0 and baseline_graded > 0
            then latest_graded * passed / (latest_graded + baseline_graded)
    end
