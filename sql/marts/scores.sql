-- materialized: view
-- stored: scores
-- partition: week
-- Purpose: every named score and evaluation of a run, as the lake stores it: a response line's
-- outcome.scores, gen_ai.evaluation.result span events and OTLP log records, each with the run
-- it counts toward (int_scores) and its verdict (score_verdict of its label). day is its run's
-- day when it counts toward a run, else its own (a span event's span, a log record's time).
-- Grain: one row per score.
create or replace view scores as
select
    run_id,
    coalesce(run_day, day) as day,
    name,
    value,
    label,
    verdict,
    explanation,
    source,
    trace_id,
    span_id,
    response_id,
    score_index,
    source_file,
    source_line
from intermediate.int_scores
