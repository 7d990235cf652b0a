-- materialized: macro
-- Purpose: relative change from old to new, in 0..1 units (0.25 = +25%); null when old is 0
-- or null.
-- Grain: a scalar macro.
create or replace macro pct_change(new, old) as
    case when old is not null and old <> 0 then (new - old) / abs(old) end
