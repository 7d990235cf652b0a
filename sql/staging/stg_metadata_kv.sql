-- materialized: view
-- Purpose: the metadata key-value pairs as read (stg_metadata_kv_lines), without the lines that
-- lost to a later line with their run_id.
-- Grain: one row per row of stg_metadata_kv_lines kept.
create or replace view staging.stg_metadata_kv as
select * from staging.stg_metadata_kv_lines as r
where not lost_line(r.run_id, r.source_file, r.source_line)
