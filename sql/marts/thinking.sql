-- Purpose: the thinking table, with the run of rows that came from a span's LLM call resolved
-- through the span (its run_id attribute, else its trace).
-- Grain: one row per reasoning block.
create or replace view thinking as
with rows_ as (
    select * from staging.stg_thinking
),

span_runs as (
    select span_id, run_id from intermediate.int_span_runs
)

select rows_.* replace (coalesce(rows_.run_id, span_runs.run_id) as run_id)
from rows_
left join span_runs on rows_.run_id is null and rows_.span_id = span_runs.span_id
