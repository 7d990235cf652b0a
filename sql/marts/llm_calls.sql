-- Purpose: the llm_calls table, each row with its run: the span's run_id attribute, else the one run
-- sharing its trace_id (linked_by says which).
-- Grain: one row per LLM call (a span's log_request).
create or replace view llm_calls as
with rows_ as (
    select * from staging.stg_llm_calls
),

span_runs as (
    select span_id, run_id, linked_by from intermediate.int_span_runs
)

select rows_.* replace (span_runs.run_id as run_id), span_runs.linked_by
from rows_
left join span_runs on rows_.span_id = span_runs.span_id
