-- materialized: macro
-- Purpose: two-sided exact McNemar p-value for paired outcomes: b cases went one way, c the
-- other; 2 * P(X <= min(b, c)) for X ~ Binomial(b + c, 1/2), capped at 1; 1 when b + c = 0.
-- Grain: a scalar macro.
create or replace macro mcnemar_exact_p(b, c) as
    case
        when coalesce(b, 0) + coalesce(c, 0) = 0 then 1.0
        else least(1.0, 2 * list_sum(list_transform(
            range(0, least(b, c) + 1),
            lambda i: exp(
                lgamma(b + c + 1) - lgamma(i + 1) - lgamma(b + c - i + 1) - (b + c) * ln(2)
            )
        )))
    end
