-- Purpose: what a run's LLM calls add up to: calls, tokens, price and their most frequent model.
-- Grain: one row per run with at least one linked LLM call.
create or replace view intermediate.int_run_llm_totals as
with calls as (
    select
        span_runs.run_id,
        llm_calls.model,
        llm_calls.input_tokens,
        llm_calls.output_tokens,
        llm_calls.price
    from staging.stg_llm_calls as llm_calls
    inner join intermediate.int_span_runs as span_runs
        on llm_calls.span_id = span_runs.span_id
    where span_runs.run_id is not null
)

select
    run_id,
    count(*) as n_llm_calls,
    sum(input_tokens)::bigint as input_tokens,
    sum(output_tokens)::bigint as output_tokens,
    sum(price) as price,
    mode(model) as model
from calls
group by run_id
