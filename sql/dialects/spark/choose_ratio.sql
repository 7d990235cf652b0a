-- Purpose: choose_ratio (sql/macros/choose_ratio.sql) in Spark SQL: the product of
-- (a - i) / (n - i) for i = 0..k-1 folded with aggregate (Spark has no list_reduce).
-- Grain: a scalar function (k <= n).
create function choose_ratio(a bigint, n bigint, k bigint) returns double return  -- noqa: LT01
case
    when a is null or n is null or k is null then null
    when k <= 0 then 1.0
    when a < k then 0.0
    else aggregate(
        sequence(0, k - 1),
        cast(1 as double),
        (acc, i) -> acc * (a - i) / (n - i)
    )
end
