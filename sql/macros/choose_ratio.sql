-- materialized: macro
-- Purpose: C(a, k) / C(n, k), the chance that k draws without replacement from n items all
-- land among a chosen ones: the product of (a - i) / (n - i) for i = 0..k-1 (every factor is
-- positive once a >= k, so it is summed as logarithms). 0 when a < k; 1 when k = 0. The
-- unbiased pass@k of a case with c passes in n graded runs is 1 - choose_ratio(n - c, n, k);
-- its pass^k is choose_ratio(c, n, k).
-- Grain: a scalar macro (k <= n).
create or replace macro choose_ratio(a, n, k) as
    case
        when a is null or n is null or k is null then null
        when k <= 0 then 1.0
        when a < k then 0.0
        else exp(list_sum(list_transform(
            range(0, k),
            lambda i: ln((a - i) / (n - i))
        )))
    end
