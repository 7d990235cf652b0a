-- materialized: view
-- stored: tool_calls
-- partition: week
-- Purpose: the tool_calls table, with the run of rows that came from a span's LLM call resolved
-- through the span (with_span_run).
-- Grain: one row per tool call.
create or replace view tool_calls as
select * from with_span_run('staging.stg_tool_calls')
