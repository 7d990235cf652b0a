-- Purpose: binomial_cdf (sql/macros/binomial_cdf.sql) in Trino SQL, which has no lgamma: the
-- terms C(n, i) p^i (1 - p)^(n - i) summed in log space, each binomial coefficient from the
-- one before.
-- Grain: a scalar function.
create function binomial_cdf(k bigint, n bigint, p double) returns double return
case
    when k is null or n is null or p is null then null
    when k < 0 then 0.0
    when k >= n then 1.0
    when p <= 0 then 1.0
    when p >= 1 then 0.0
    else least(1.0, reduce(
        sequence(0, k),
        cast(row(0.0, 0.0) as row(log_c double, total double)),
        (acc, i) -> cast(row(
            acc.log_c + ln(cast(n - i as double) / (i + 1)),
            acc.total + exp(acc.log_c + i * ln(p) + (n - i) * ln(1 - p))
        ) as row(log_c double, total double)),
        acc -> acc.total
    ))
end
