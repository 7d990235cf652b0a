-- Purpose: fisher_exact_greater (sql/macros/fisher_exact_greater.sql) in Spark SQL, which has
-- no lgamma: the logarithm of the first term P(X = b) from log_choose, each next one from the
-- one before by the ratio P(X = k + 1) / P(X = k) = (a + b - k) (n1 - k) / ((k + 1)
-- (n0 - a - b + k + 1)), kept in logarithms so that a first term far below the mode does not
-- underflow to 0 before the terms near it. The last step's ratio is 0 (floored: never read).
-- Grain: a scalar function.
create function fisher_exact_greater(  -- noqa: LT01
    a bigint, n0 bigint, b bigint, n1 bigint
) returns double return
case
    when a is null or n0 is null or b is null or n1 is null then null
    when n0 = 0 or n1 = 0 then null
    when b = 0 then 1.0
    else least(1.0, aggregate(
        sequence(b, least(a + b, n1)),
        named_struct(
            'log_term',
            log_choose(a + b, b) + log_choose(n0 + n1 - a - b, n1 - b)
            - log_choose(n0 + n1, n1),
            'total', cast(0 as double)
        ),
        (acc, k) -> named_struct(
            'log_term', acc.log_term + ln(greatest(
                (a + b - k) * (n1 - k) / ((k + 1) * (n0 - a - b + k + 1)), 1e-300
            )),
            'total', acc.total + exp(acc.log_term)
        ),
        acc -> acc.total
    ))
end
