-- materialized: macro
-- Purpose: two-sided p-value of a standard normal statistic z, P(|Z| >= |z|) = erfc(|z| / sqrt 2),
-- by the Chebyshev fit of erfc in Numerical Recipes (relative error under 1.2e-7 everywhere).
-- Capped at 1.
-- Grain: a scalar macro.
create or replace macro normal_two_sided_p(z) as least(1.0,
    (1 / (1 + 0.5 * abs(z) / sqrt(2))) * exp(
        0 - (abs(z) / sqrt(2)) * (abs(z) / sqrt(2)) - 1.26551223
        + (1 / (1 + 0.5 * abs(z) / sqrt(2))) * (1.00002368
        + (1 / (1 + 0.5 * abs(z) / sqrt(2))) * (0.37409196
        + (1 / (1 + 0.5 * abs(z) / sqrt(2))) * (0.09678418
        + (1 / (1 + 0.5 * abs(z) / sqrt(2))) * (-0.18628806
        + (1 / (1 + 0.5 * abs(z) / sqrt(2))) * (0.27886807
        + (1 / (1 + 0.5 * abs(z) / sqrt(2))) * (-1.13520398
        + (1 / (1 + 0.5 * abs(z) / sqrt(2))) * (1.48851587
        + (1 / (1 + 0.5 * abs(z) / sqrt(2))) * (-0.82215223
        + (1 / (1 + 0.5 * abs(z) / sqrt(2))) * 0.17087277))))))))
    )
)
