-- materialized: table
-- stored: _derived/int_run_lines
-- partition: week
-- Purpose: the keys and totals of every run as read, before the warehouse resolves it from its
-- spans: the response lines that won (staging.stg_runs) and the runs made from traces no
-- response line claims (int_trace_runs). Narrow: the views that link or total runs read it, and
-- int_runs reads the lines' own columns.
-- Grain: one row per run (or turn of a multi-turn session).
create or replace view intermediate.int_run_lines as
with lines as (
    select * from staging.stg_runs
    union all by name
    select * exclude (root_failed, root_span_id) from intermediate.int_trace_runs
)

select
    run_id,
    day,
    agent,
    model,
    trace_id,
    input_tokens,
    output_tokens,
    agent_runtime_ms,
    record_shape
from lines
