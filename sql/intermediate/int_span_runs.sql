-- Purpose: the run of each span: its run_id attribute, else the one run whose trace_id it shares.
-- Grain: one row per span_id (span ids are random 64-bit ids: unique across traces in practice).
create or replace view intermediate.int_span_runs as
with spans as (
    select trace_id, span_id, run_id from staging.stg_spans
),

runs_by_trace as (
    select trace_id, min(run_id) as run_id
    from staging.stg_runs
    where trace_id is not null
    group by trace_id
    having count(distinct run_id) = 1
),

linked as (
    select
        spans.trace_id,
        spans.span_id,
        coalesce(spans.run_id, runs_by_trace.run_id) as run_id,
        case
            when spans.run_id is not null then 'attribute'
            when runs_by_trace.run_id is not null then 'trace_id'
        end as linked_by
    from spans
    left join runs_by_trace on spans.trace_id = runs_by_trace.trace_id
)

select
    span_id,
    any_value(trace_id) as trace_id,
    any_value(run_id) as run_id,
    any_value(linked_by) as linked_by
from linked
group by span_id
