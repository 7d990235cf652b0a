-- materialized: window_table
-- Purpose: the LLM calls as read (stg_llm_calls_lines), without the copies of a span that lost.
-- Grain: one row per row of stg_llm_calls_lines kept.
create or replace view staging.stg_llm_calls as
select * from staging.stg_llm_calls_lines as r
where
    not exists (
        select 1 from staging.stg_superseded_calls as s
        where
            s.span_id = r.span_id
            and s.trace_id = r.trace_id
            and s.source_file = r.source_file
            and s.source_line = r.source_line
    )
