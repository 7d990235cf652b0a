-- materialized: table
-- stored: _derived/int_llm_latency
-- partition: week
-- Purpose: latency percentiles of LLM calls grouped by the keys of the run each call belongs
-- to (linked as in the llm_calls view: the span's run_id attribute, else its trace's run;
-- calls more than a day from their run are not counted).
-- Grain: one row per day, agent, model (the run's) with at least one LLM call.
create or replace view intermediate.int_llm_latency as
with runs_ as (
    select run_id, day, agent, model from intermediate.int_run_resolved
),

calls as (
    select span_runs.run_id, llm_calls.latency_ms
    from staging.stg_llm_calls as llm_calls
    inner join intermediate.int_span_runs as span_runs
        on
            llm_calls.source_file = span_runs.source_file
            and llm_calls.source_line = span_runs.source_line
            and llm_calls.span_id = span_runs.span_id
    where span_runs.near_run_day is not null
)

select
    runs_.day,
    runs_.agent,
    runs_.model,
    quantile_cont(calls.latency_ms, 0.5) as llm_latency_ms_p50,
    quantile_cont(calls.latency_ms, 0.95) as llm_latency_ms_p95
from calls
inner join runs_ on calls.run_id = runs_.run_id
group by runs_.day, runs_.agent, runs_.model
