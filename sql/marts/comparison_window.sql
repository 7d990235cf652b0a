-- materialized: macro
-- Purpose: the comparison window every regression figure uses: latest_day (on_day, or the
-- latest day with runs when on_day is null, never a day after today in UTC: a run dated there
-- has a wrong clock) against the baseline_days days before it (7 when null), baseline_start to
-- baseline_end inclusive.
-- Grain: one row.
create or replace macro comparison_window(on_day, baseline_days) as table
with bounds as (
    select
        coalesce(
            cast(on_day as date),
            (
                select max(day) from runs
                where day <= cast(current_timestamp at time zone 'UTC' as date)
            )
        ) as latest_day,
        cast(coalesce(baseline_days, 7) as integer) as n_days
)

select
    latest_day,
    n_days,
    cast(latest_day - n_days as date) as baseline_start,
    cast(latest_day - 1 as date) as baseline_end
from bounds
