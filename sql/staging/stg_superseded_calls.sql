-- materialized: window_table
-- Purpose: stg_superseded_spans with the trace: an LLM call row names its trace, so the copies
-- that lost are told from a winner of another trace in the same line. (A span the same line
-- holds twice reads its LLM call from the later copy only: transforms.normalize.spans.)
-- Grain: one row per losing copy's line, span_id and trace_id.
create or replace view staging.stg_superseded_calls as
select source_file, source_line, span_id, trace_id from staging.stg_span_copies
where copy_rank > 1
except
select source_file, source_line, span_id, trace_id from staging.stg_span_copies
where copy_rank = 1
