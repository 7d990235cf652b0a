-- materialized: macro
-- Purpose: the p-value below which a pass-rate drop that is not significant (see
-- significance_level) is still worth a warning: the Dagster check turns WARN, the run stays
-- green. Change it here and the check follows.
-- Grain: a scalar macro.
create or replace macro warning_level() as 0.05
