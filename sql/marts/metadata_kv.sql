-- materialized: view
-- stored: metadata_kv
-- partition: week
-- Purpose: the metadata_kv lake table as stored.
-- Grain: one row per metadata key of a run outside the five common keys.
create or replace view metadata_kv as
select * from staging.stg_metadata_kv
