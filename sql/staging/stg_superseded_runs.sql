-- materialized: view
-- Purpose: the response lines that lost to a later line with their run_id, as read.
-- Grain: one row per losing line.
create or replace view staging.stg_superseded_runs as
select * from staging.stg_runs_lines as r
where lost_line(r.run_id, r.source_file, r.source_line)
