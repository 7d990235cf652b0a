-- Purpose: mcnemar_exact_p (sql/macros/mcnemar_exact_p.sql) in Spark SQL, which has no
-- lgamma: the binomial terms C(n, i) / 2^n summed in log space, each from the one before.
-- Grain: a scalar function over the two discordant counts.
create function mcnemar_exact_p(b bigint, c bigint) returns double return  -- noqa: LT01
case
    when coalesce(b, 0) + coalesce(c, 0) = 0 then 1.0
    else least(1.0, 2 * aggregate(
        sequence(0, least(b, c)),
        named_struct('log_c', cast(0 as double), 'total', cast(0 as double)),
        (acc, i) -> named_struct(
            'log_c', acc.log_c + ln((b + c - i) / (i + 1)),
            'total', acc.total + exp(acc.log_c - (b + c) * ln(2))
        ),
        acc -> acc.total
    ))
end
