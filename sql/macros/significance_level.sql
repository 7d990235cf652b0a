-- materialized: macro
-- Purpose: the one significance level of runlake's tests: a p-value below it is significant
-- (pass-rate drops, error-rate rises). Change it here and every view follows.
-- Grain: a scalar macro.
create or replace macro significance_level() as 0.01
