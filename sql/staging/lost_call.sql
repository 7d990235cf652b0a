-- materialized: macro
-- Purpose: whether a row as read came from a copy of a span that lost, told by its trace too
-- (stg_superseded_calls): an LLM call, a span's evaluation.
-- Grain: a scalar macro over a row's span_id, trace_id, source_file and source_line.
create or replace macro lost_call(span_id_, trace_id_, file_, line_) as exists (
    select 1 from staging.stg_superseded_calls as s
    where
        s.span_id = span_id_ and s.trace_id = trace_id_
        and s.source_file = file_ and s.source_line = line_
)
