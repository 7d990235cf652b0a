-- materialized: view
-- Purpose: the ingest_files lake table as stored.
-- Grain: one row per input file.
create or replace view ingest_files as
select * from staging.stg_ingest_files
