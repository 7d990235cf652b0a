-- materialized: macro
-- Purpose: one-sided p-value of the pooled two-proportion z-test that k2 of n2 is a larger
-- share than k1 of n1, P(Z >= z): half the two-sided p when the second share is larger, one
-- minus that half otherwise; 1 when both shares are 0 or both 1 (no variance, no evidence);
-- null when a side is empty.
-- Grain: a scalar macro.
create or replace macro two_proportion_p_greater(k1, n1, k2, n2) as
    case
        when n1 is null or n2 is null or n1 = 0 or n2 = 0 then null
        when (k1 + k2) = 0 or (k1 + k2) = (n1 + n2) then 1.0
        when k2 / n2 > k1 / n1 then two_proportion_p(k1, n1, k2, n2) / 2
        else 1 - two_proportion_p(k1, n1, k2, n2) / 2
    end
