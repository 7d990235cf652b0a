-- materialized: macro
-- Purpose: the one-sided Fisher exact test that a rare event (a crash) became more frequent: a
-- events in n0 runs before, b in n1 runs after. p = P(X >= b) for X hypergeometric, the events
-- among n1 runs drawn from all n0 + n1 runs holding a + b events: the terms
-- C(a + b, k) C(n0 + n1 - a - b, n1 - k) / C(n0 + n1, n1) for k = b..min(a + b, n1) summed,
-- each from logarithms (log_choose). One event after none in n0 runs gives n1 / (n0 + n1),
-- significant only when the baseline has about 100 times the night's runs.
-- 1 when b = 0; null when a side has no run or an argument is null.
-- Grain: a scalar macro.
create or replace macro fisher_exact_greater(a, n0, b, n1) as
    case
        when a is null or n0 is null or b is null or n1 is null then null
        when n0 = 0 or n1 = 0 then null
        when b = 0 then 1.0
        else least(1.0, list_sum(list_transform(
            range(b, least(a + b, n1) + 1),
            lambda k: exp(
                log_choose(a + b, k) + log_choose(n0 + n1 - a - b, n1 - k)
                - log_choose(n0 + n1, n1)
            )
        )))
    end
