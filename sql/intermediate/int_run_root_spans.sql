-- materialized: table
-- stored: _derived/int_run_root_spans
-- partition: week
-- Purpose: each run's root span (no parent, or a parent that is not among the trace's spans
-- within a day of the run) and its duration, from the run's spans within a day of it. run_day is
-- the run's day. A root that ends before it starts (span_end_before_start) gives no runtime:
-- a negative duration is never a run's agent_runtime_ms.
-- Grain: one row per run with at least one linked span; the longest root when there are several
-- (the least span_id of those as long).
create or replace view intermediate.int_run_root_spans as
with spans as (
    select
        span_runs.run_id,
        span_runs.near_run_day as run_day,
        spans.trace_id,
        spans.span_id,
        spans.parent_id,
        spans.duration_ms
    from staging.stg_spans as spans
    inner join intermediate.int_span_runs as span_runs
        on
            spans.source_file = span_runs.source_file
            and spans.source_line = span_runs.source_line
            and spans.span_id = span_runs.span_id
    where span_runs.near_run_day is not null
),

roots as (
    select *
    from spans
    where parent_id is null
       or not exists (
           select 1 from staging.stg_spans as parent
           where parent.trace_id = spans.trace_id and parent.span_id = spans.parent_id
             and within_reach(parent.day, spans.run_day)
       )
),

longest as (
    select
        *,
        max(case when duration_ms >= 0 then duration_ms end) over (partition by run_id)
            as longest_ms
    from roots
)

-- Of roots that last as long, the least span_id: the same root however the rows are read.
select
    run_id,
    any_value(run_day) as run_day,
    min(span_id) filter (where duration_ms = longest_ms) as span_id,
    max(longest_ms) as duration_ms
from longest
group by run_id
