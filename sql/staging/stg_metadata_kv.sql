-- materialized: view
-- Purpose: the metadata key-value pairs as read (stg_metadata_kv_lines), without the lines that
-- lost to a later line with their run_id.
-- Grain: one row per row of stg_metadata_kv_lines kept.
create or replace view staging.stg_metadata_kv as
select * from staging.stg_metadata_kv_lines as r
where
    not exists (
        select 1 from staging.stg_superseded_lines as l
        where
            l.run_id = r.run_id
            and l.source_file = r.source_file
            and l.source_line = r.source_line
    )
