-- materialized: table
-- stored: _derived/int_span_run_misses
-- partition: week
-- Purpose: the spans that look for a run and meet none within a day of them (within_reach): their
-- run_id attribute names no run within a day, or, without one, no single run within a day shares
-- their trace. Whether the run they look for exists further away is asked of the whole lake
-- (int_span_far_flags), from these rows: spans that look for the same thing on the same day are
-- one row, with the earliest of them (by start, then span_id), so that step reads few rows.
-- Grain: one row per trace_id, run_id attribute (null: none) and day of such spans.
create or replace view intermediate.int_span_run_misses as
with spans as (
    select trace_id, span_id, run_id, day, start_time, source_file, source_line
    from staging.stg_spans
),

span_runs as (
    select source_file, source_line, span_id, linked_by, near_run_day
    from intermediate.int_span_runs
),

missed as (
    select
        spans.*,
        count(*) over looking_for as n_spans,
        row_number() over (
            looking_for order by spans.start_time asc nulls last, spans.span_id asc
        ) as position
    from spans
    inner join span_runs
        on
            spans.source_file = span_runs.source_file
            and spans.source_line = span_runs.source_line
            and spans.span_id = span_runs.span_id
    where span_runs.near_run_day is null
      and (span_runs.linked_by = 'attribute' or span_runs.linked_by is null)
    window looking_for as (partition by spans.trace_id, spans.run_id, spans.day)
)

select
    trace_id,
    run_id,
    day,
    n_spans,
    span_id as first_span_id,
    source_file,
    source_line
from missed
where position = 1
