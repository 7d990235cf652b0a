-- materialized: macro
-- Purpose: two-sided p-value of the pooled two-proportion z-test of k1 of n1 against k2 of n2;
-- 1 when both proportions are 0 or both 1 (no variance, no evidence); null when a side is empty.
-- Grain: a scalar macro.
create or replace macro two_proportion_p(k1, n1, k2, n2) as
    case
        when n1 is null or n2 is null or n1 = 0 or n2 = 0 then null
        when (k1 + k2) = 0 or (k1 + k2) = (n1 + n2) then 1.0
        else normal_two_sided_p(
            (k2 / n2 - k1 / n1)
            / sqrt((k1 + k2) / (n1 + n2) * (1 - (k1 + k2) / (n1 + n2)) * (1 / n1 + 1 / n2))
        )
    end
