-- materialized: macro
-- Purpose: whether a row as read came from a copy of a span that lost to a later copy
-- (stg_superseded_spans): an LLM call's messages, tool calls, reasoning blocks and findings. A
-- row of no span (span_id null) lost nothing.
-- Grain: a scalar macro over a row's span_id, source_file and source_line.
create or replace macro lost_span_copy(span_id_, file_, line_) as span_id_ is not null and exists (
    select 1 from staging.stg_superseded_spans as s
    where s.span_id = span_id_ and s.source_file = file_ and s.source_line = line_
)
