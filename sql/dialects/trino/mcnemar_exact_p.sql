-- Purpose: mcnemar_exact_p (sql/macros/mcnemar_exact_p.sql) in Trino SQL, which has no
-- lgamma: the binomial terms C(n, i) / 2^n summed in log space, each from the one before.
-- Grain: a scalar function over the two discordant counts.
create function mcnemar_exact_p(b bigint, c bigint) returns double return
case
    when coalesce(b, 0) + coalesce(c, 0) = 0 then 1.0
    else least(1.0, 2 * reduce(
        sequence(0, least(b, c)),
        cast(row(0.0, 0.0) as row(log_c double, total double)),
        (acc, i) -> cast(row(
            acc.log_c + ln(cast(b + c - i as double) / (i + 1)),
            acc.total + exp(acc.log_c - (b + c) * ln(2))
        ) as row(log_c double, total double)),
        acc -> acc.total
    ))
end
