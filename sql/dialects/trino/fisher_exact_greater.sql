-- Purpose: fisher_exact_greater (sql/macros/fisher_exact_greater.sql) in Trino SQL, which has
-- no lgamma: the first term P(X = b) from log_choose, each next one from the one before by the
-- ratio P(X = k + 1) / P(X = k) = (a + b - k) (n1 - k) / ((k + 1) (n0 - a - b + k + 1)).
-- Grain: a scalar function.
create function fisher_exact_greater(a bigint, n0 bigint, b bigint, n1 bigint) returns double
return
case
    when a is null or n0 is null or b is null or n1 is null then null
    when n0 = 0 or n1 = 0 then null
    else least(1.0, reduce(
        sequence(b, least(a + b, n1)),
        cast(row(
            exp(
                log_choose(a + b, b) + log_choose(n0 + n1 - a - b, n1 - b)
                - log_choose(n0 + n1, n1)
            ),
            0.0
        ) as row(term double, total double)),
        (acc, k) -> cast(row(
            acc.term * cast((a + b - k) * (n1 - k) as double)
            / ((k + 1) * (n0 - a - b + k + 1)),
            acc.total + acc.term
        ) as row(term double, total double)),
        acc -> acc.total
    ))
end
