-- Purpose: fisher_exact_greater (sql/macros/fisher_exact_greater.sql) in Trino SQL, which has
-- no lgamma: the logarithm of the first term P(X = b) from log_choose, each next one from the
-- one before by the ratio P(X = k + 1) / P(X = k) = (a + b - k) (n1 - k) / ((k + 1)
-- (n0 - a - b + k + 1)), kept in logarithms so that a first term far below the mode does not
-- underflow to 0 before the terms near it. The last step's ratio is 0 (floored: never read).
-- Grain: a scalar function.
create function fisher_exact_greater(a bigint, n0 bigint, b bigint, n1 bigint) returns double
return
case
    when a is null or n0 is null or b is null or n1 is null then null
    when n0 = 0 or n1 = 0 then null
    when b = 0 then 1.0
    else least(1.0, reduce(
        sequence(b, least(a + b, n1)),
        cast(row(
            log_choose(a + b, b) + log_choose(n0 + n1 - a - b, n1 - b)
            - log_choose(n0 + n1, n1),
            0.0
        ) as row(log_term double, total double)),
        (acc, k) -> cast(row(
            acc.log_term + ln(greatest(
                cast((a + b - k) * (n1 - k) as double) / ((k + 1) * (n0 - a - b + k + 1)),
                1e-300
            )),
            acc.total + exp(acc.log_term)
        ) as row(log_term double, total double)),
        acc -> acc.total
    ))
end
