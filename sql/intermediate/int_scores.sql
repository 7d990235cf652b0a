-- materialized: table
-- stored: _derived/int_scores
-- partition: week
-- Purpose: every score with the run it counts toward (a log record delivered twice once). A
-- response line's outcome.scores belong to its run. A span event's evaluation belongs to its
-- span's run (int_span_runs). An OTLP log record's belongs to the run its run_id attribute
-- names, else to the run of the span it names (trace_id and span_id, any copy of the span
-- within a day of the record), else to the one run of its trace within a day of it, else to the
-- run of the span that reported its gen_ai.response.id (an LLM call within a day of it).
-- run_day is the run's day when it is within a day of the score (the score counts toward it);
-- verdict is score_verdict(label).
-- Grain: one row per score as read.
create or replace view intermediate.int_scores as
with read_scores as (
    select * from staging.stg_scores
),

-- A log record delivered twice (an exporter retries what it does not know was written) is one
-- score: the same evaluation of the same span, trace or response on the same day, the copy read
-- last kept. Other scores are each their line's own.
scores as (
    select * exclude (copy_rank)
    from (
        select
            *,
            row_number() over (
                partition by
                    source, trace_id, span_id, response_id, run_id, name, value, label,
                    explanation, day,
                    case when source <> 'log_record' then source_file end,
                    case when source <> 'log_record' then source_line end,
                    case when source <> 'log_record' then score_index end
                order by source_file desc, source_line desc, score_index desc
            ) as copy_rank
        from read_scores
    ) as copies
    where copy_rank = 1
),

span_runs as (
    select source_file, source_line, span_id, trace_id, run_id, day
    from intermediate.int_span_runs
),

runs as (
    select run_id, trace_id, day from intermediate.int_run_lines
),

-- Span events: the span line they were read with.
from_events as (
    select scores.source_file, scores.source_line, scores.score_index, span_runs.run_id
    from scores
    inner join span_runs
        on
            scores.source_file = span_runs.source_file
            and scores.source_line = span_runs.source_line
            and scores.span_id = span_runs.span_id
            and scores.trace_id = span_runs.trace_id
    where scores.source = 'span_event'
),

records as (
    select * from scores where source = 'log_record' and run_id is null
),

by_span as (
    select records.source_file, records.source_line, records.score_index,
           min(span_runs.run_id) as run_id
    from records
    inner join span_runs
        on
            records.trace_id = span_runs.trace_id
            and records.span_id = span_runs.span_id
            and within_reach(span_runs.day, records.day)
    group by records.source_file, records.source_line, records.score_index
    having count(distinct span_runs.run_id) = 1
),

by_trace as (
    select records.source_file, records.source_line, records.score_index,
           min(runs.run_id) as run_id
    from records
    inner join runs
        on records.trace_id = runs.trace_id and within_reach(runs.day, records.day)
    group by records.source_file, records.source_line, records.score_index
    having count(distinct runs.run_id) = 1
),

responses as (
    select
        calls.trace_id,
        calls.span_id,
        calls.day,
        json_extract_string(calls.attributes, '$."gen_ai.response.id"') as response_id
    from staging.stg_spans as calls
    where calls.has_log_request
),

by_response as (
    select records.source_file, records.source_line, records.score_index,
           min(span_runs.run_id) as run_id
    from records
    inner join responses
        on records.response_id = responses.response_id and within_reach(responses.day, records.day)
    inner join span_runs
        on responses.trace_id = span_runs.trace_id and responses.span_id = span_runs.span_id
    group by records.source_file, records.source_line, records.score_index
    having count(distinct span_runs.run_id) = 1
),

-- Each score's run by the first way that finds one: its span line, its span, its trace, its
-- response.
found as (
    select source_file, source_line, score_index, arg_min(run_id, way) as run_id
    from (
        select *, 1 as way from from_events
        union all
        select *, 2 as way from by_span
        union all
        select *, 3 as way from by_trace
        union all
        select *, 4 as way from by_response
    ) as ways
    group by source_file, source_line, score_index
),

linked as (
    select
        scores.*,
        coalesce(scores.run_id, found.run_id) as linked_run_id
    from scores
    left join found
        on
            scores.source_file = found.source_file
            and scores.source_line = found.source_line
            and scores.score_index = found.score_index
)

select
    linked.* exclude (run_id, linked_run_id),
    linked.linked_run_id as run_id,
    score_verdict(linked.label) as verdict,
    runs.day as run_day
from linked
left join runs on linked.linked_run_id = runs.run_id and within_reach(runs.day, linked.day)
