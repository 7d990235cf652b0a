-- materialized: window_table
-- Purpose: the runs as read (stg_runs_lines), without the lines that lost to a later line with
-- their run_id.
-- Grain: one row per row of stg_runs_lines kept.
create or replace view staging.stg_runs as
select * from staging.stg_runs_lines as r
where not lost_line(r.run_id, r.source_file, r.source_line)
