-- materialized: window_table
-- Purpose: the LLM calls as read (stg_llm_calls_lines), without the copies of a span that lost.
-- Grain: one row per row of stg_llm_calls_lines kept.
create or replace view staging.stg_llm_calls as
select * from staging.stg_llm_calls_lines as r
where not lost_call(r.span_id, r.trace_id, r.source_file, r.source_line)
