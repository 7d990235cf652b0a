-- Purpose: binomial_cdf (sql/macros/binomial_cdf.sql) in Spark SQL, which has no lgamma: the
-- terms C(n, i) p^i (1 - p)^(n - i) summed in log space, each binomial coefficient from the
-- one before. Trino's body is translated from this one.
-- Grain: a scalar function.
create function binomial_cdf(k bigint, n bigint, p double) returns double return  -- noqa: LT01
case
    when k is null or n is null or p is null then null
    when k < 0 then 0.0
    when k >= n then 1.0
    when p <= 0 then 1.0
    when p >= 1 then 0.0
    else least(1.0, aggregate(
        sequence(0, k),
        named_struct('log_c', cast(0 as double), 'total', cast(0 as double)),
        (acc, i) -> named_struct(
            'log_c', acc.log_c + ln((n - i) / (i + 1)),
            'total', acc.total + exp(acc.log_c + i * ln(p) + (n - i) * ln(1 - p))
        ),
        acc -> acc.total
    ))
end
