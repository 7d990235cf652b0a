-- materialized: macro
-- Purpose: whether a row as read came from a line that lost to a later line with its run_id
-- (stg_superseded_lines): its rows are left out of the views.
-- Grain: a scalar macro over a row's run_id, source_file and source_line.
create or replace macro lost_line(run_id_, file_, line_) as exists (
    select 1 from staging.stg_superseded_lines as l
    where l.run_id = run_id_ and l.source_file = file_ and l.source_line = line_
)
