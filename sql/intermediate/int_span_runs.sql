-- materialized: table
-- stored: _derived/int_span_runs
-- partition: week
-- Purpose: the run of each span: its run_id attribute, else the one run_id attribute the spans of
-- its trace within a day of it carry (an SDK sets it on the root span only: its children, in any
-- line, file or ingest, find it there), else the one run whose trace_id it shares among the runs
-- within a day of the span (within_reach; a run made from a trace shares its trace, int_run_lines).
-- near_run_day is the day of that run's
-- line when the run is within a day of the span: only such spans count toward their run's totals,
-- runtime and findings. A span is its trace_id and span_id (two traces may reuse a span id); the
-- rows read from one span line (its LLM call, messages, tool calls, findings) meet it by the
-- line they came from (source_file, source_line) and span_id, the keys every such row has.
-- Grain: one row per span line and span_id (source_file, source_line, span_id).
create or replace view intermediate.int_span_runs as
with spans as (
    select trace_id, span_id, run_id, day, source_file, source_line from staging.stg_spans
),

runs as (
    select run_id, trace_id, day from intermediate.int_run_lines
),

-- The runs a span without its own run_id may be linked to, within a day of it: those its
-- trace's other spans name (trace_attribute), and those whose line names its trace (trace_id).
candidates as (
    select spans.trace_id, spans.span_id, carrier.run_id, 'trace_attribute' as linked_by
    from spans
    inner join spans as carrier
        on
            spans.trace_id = carrier.trace_id
            and carrier.run_id is not null
            and within_reach(carrier.day, spans.day)
    where spans.run_id is null
    union all
    select spans.trace_id, spans.span_id, runs.run_id, 'trace_id' as linked_by
    from spans
    inner join runs
        on spans.trace_id = runs.trace_id and within_reach(runs.day, spans.day)
    where spans.run_id is null
),

-- Each way that names one run only.
single as (
    select trace_id, span_id, linked_by, min(run_id) as run_id
    from candidates
    group by trace_id, span_id, linked_by
    having count(distinct run_id) = 1
),

trace_named as (
    select trace_id, span_id, run_id from single where linked_by = 'trace_attribute'
),

by_trace as (
    select trace_id, span_id, run_id from single where linked_by = 'trace_id'
),

linked as (
    select
        spans.source_file,
        spans.source_line,
        spans.trace_id,
        spans.span_id,
        spans.day,
        coalesce(spans.run_id, trace_named.run_id, by_trace.run_id) as run_id,
        case
            when spans.run_id is not null then 'attribute'
            when trace_named.run_id is not null then 'trace_attribute'
            when by_trace.run_id is not null then 'trace_id'
        end as linked_by
    from spans
    left join trace_named
        on spans.trace_id = trace_named.trace_id and spans.span_id = trace_named.span_id
    left join by_trace
        on spans.trace_id = by_trace.trace_id and spans.span_id = by_trace.span_id
),

near as (
    select linked.*, runs.day as near_run_day
    from linked
    left join runs on linked.run_id = runs.run_id and within_reach(runs.day, linked.day)
)

select
    source_file,
    source_line,
    span_id,
    any_value(trace_id) as trace_id,
    any_value(day) as day,
    any_value(run_id) as run_id,
    any_value(linked_by) as linked_by,
    any_value(near_run_day) as near_run_day
from near
group by source_file, source_line, span_id
