-- Purpose: log_choose (sql/macros/log_choose.sql) in Spark SQL, which has no lgamma: ln C(n, r)
-- = ln C(n, s) with s = min(r, n - r), as the sum of ln((n - s + i) / i) for i = 1..s. Trino's
-- body is its own (Trino's reduce takes an output function, Spark's aggregate none).
-- Grain: a scalar function (0 <= r <= n).
create function log_choose(n bigint, r bigint) returns double return  -- noqa: LT01
case
    when n is null or r is null then null
    when r <= 0 or r >= n then cast(0 as double)
    else aggregate(
        sequence(1, least(r, n - r)),
        cast(0 as double),
        (acc, i) -> acc + ln((n - least(r, n - r) + i) / i)
    )
end
