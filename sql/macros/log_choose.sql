-- materialized: macro
-- Purpose: ln C(n, r), the logarithm of the binomial coefficient, from lgamma so that large n
-- neither overflows nor loses digits; 0 when r = 0 or r = n. Null when an argument is null.
-- Grain: a scalar macro (0 <= r <= n).
create or replace macro log_choose(n, r) as
    lgamma(n + 1) - lgamma(r + 1) - lgamma(n - r + 1)
