-- materialized: view
-- Purpose: the quarantine lake table as stored.
-- Grain: one row per input line that could not be read as a record.
create or replace view quarantine as
select * from staging.stg_quarantine
