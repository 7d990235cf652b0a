-- materialized: macro
-- Purpose: the standard normal distribution function Φ(z) = P(Z <= z), from the same erfc fit
-- as normal_two_sided_p (relative error under 1.2e-7): half the two-sided tail below zero, one
-- minus it above. Used for one-sided tests: Φ(z) is the p-value of a drop, Φ(-z) of a rise.
-- Grain: a scalar macro.
create or replace macro normal_cdf(z) as
    case
        when z is null then null
        when z < 0 then normal_two_sided_p(z) / 2
        else 1 - normal_two_sided_p(z) / 2
    end
