-- materialized: view
-- Purpose: the response lines that lost to a later line with their run_id, as read.
-- Grain: one row per losing line.
create or replace view staging.stg_superseded_runs as
select * from staging.stg_runs_lines as r
where exists (
    select 1 from staging.stg_superseded_lines as l
    where
        l.run_id = r.run_id
        and l.source_file = r.source_file
        and l.source_line = r.source_line
)
