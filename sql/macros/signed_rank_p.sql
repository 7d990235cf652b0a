-- materialized: macro
-- Purpose: the one-sided Wilcoxon signed-rank test of a drop, by the normal approximation: n
-- non-zero paired differences ranked by their size (ties take their average rank), w_plus the
-- sum of the ranks of the positive ones, tie_sum the sum of t^3 - t over the groups of t tied
-- sizes. p = Φ((w_plus - n(n + 1)/4) / √(n(n + 1)(2n + 1)/24 - tie_sum/48)), no continuity
-- correction; the p of a rise is the same with w_plus = n(n + 1)/2 - w_plus (the negative
-- ranks' sum). Null when n is 0 or null.
-- Grain: a scalar macro.
create or replace macro signed_rank_p(w_plus, n, tie_sum) as
    case
        when n is null or n = 0 or w_plus is null then null
        else normal_cdf(
            (w_plus - n * (n + 1) / 4)
            / sqrt(n * (n + 1) * (2 * n + 1) / 24 - coalesce(tie_sum, 0) / 48)
        )
    end
