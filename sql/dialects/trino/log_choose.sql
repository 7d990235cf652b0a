-- Purpose: log_choose (sql/macros/log_choose.sql) in Trino SQL, which has no lgamma: ln C(n, r)
-- as the sum of ln((n - r + i) / i) for i = 1..r.
-- Grain: a scalar function (0 <= r <= n).
create function log_choose(n bigint, r bigint) returns double return
case
    when n is null or r is null then null
    when r <= 0 or r >= n then cast(0 as double)
    else reduce(
        sequence(1, r),
        cast(0.0 as double),
        (acc, i) -> acc + ln(cast(n - r + i as double) / i),
        acc -> acc
    )
end
