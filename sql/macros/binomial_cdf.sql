-- materialized: macro
-- Purpose: the binomial distribution function P(X <= k) for X ~ Binomial(n, p): the terms
-- C(n, i) p^i (1 - p)^(n - i) for i = 0..k summed, each taken from logarithms (lgamma) so that
-- large n neither overflows nor underflows. 0 when k < 0, 1 when k >= n; p = 0 or 1 are exact.
-- Null when an argument is null.
-- Grain: a scalar macro.
create or replace macro binomial_cdf(k, n, p) as
    case
        when k is null or n is null or p is null then null
        when k < 0 then 0.0
        when k >= n then 1.0
        when p <= 0 then 1.0
        when p >= 1 then 0.0
        else least(1.0, list_sum(list_transform(
            range(0, k + 1),
            lambda i: exp(
                lgamma(n + 1) - lgamma(i + 1) - lgamma(n - i + 1)
                + i * ln(p) + (n - i) * ln(1 - p)
            )
        )))
    end
