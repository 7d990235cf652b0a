-- Purpose: choose_ratio (sql/macros/choose_ratio.sql) in Trino SQL: the product of
-- (a - i) / (n - i) for i = 0..k-1 folded with reduce.
-- Grain: a scalar function (k <= n).
create function choose_ratio(a bigint, n bigint, k bigint) returns double return
case
    when a is null or n is null or k is null then null
    when k <= 0 then 1.0
    when a < k then 0.0
    else reduce(
        sequence(0, k - 1),
        cast(1.0 as double),
        (acc, i) -> acc * cast(a - i as double) / (n - i),
        acc -> acc
    )
end
