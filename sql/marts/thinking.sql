-- materialized: view
-- stored: thinking
-- partition: week
-- Purpose: the thinking table, with the run of rows that came from a span's LLM call resolved
-- through the span (with_span_run).
-- Grain: one row per reasoning block.
create or replace view thinking as
select * from with_span_run('staging.stg_thinking')
