-- materialized: window_table
-- Purpose: the tool calls as read (stg_tool_calls_lines), without the lines that lost to a later
-- line with their run_id and the rows read from a copy of a span that lost.
-- Grain: one row per row of stg_tool_calls_lines kept.
create or replace view staging.stg_tool_calls as
select * from staging.stg_tool_calls_lines as r
where not lost_line(r.run_id, r.source_file, r.source_line)
    and not lost_span_copy(r.span_id, r.source_file, r.source_line)
