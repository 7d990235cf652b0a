-- materialized: macro
-- Purpose: lower bound of the Wilson 95% score interval for k successes out of n (null if n = 0).
-- Grain: a scalar macro.
create or replace macro wilson_low(k, n) as
    case when n > 0 then
        (k / n + 1.959963984540054 ^ 2 / (2 * n)
         - 1.959963984540054 * sqrt(k / n * (1 - k / n) / n
                                    + 1.959963984540054 ^ 2 / (4 * n * n)))
        / (1 + 1.959963984540054 ^ 2 / n)
    end
