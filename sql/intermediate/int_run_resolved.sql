-- Purpose: each run's resolved keys and totals: model, tokens and runtime from its line, else
-- from its spans, with where each came from; narrow, so views that group runs join it cheaply.
-- Grain: one row per run.
create or replace view intermediate.int_run_resolved as
with lines as (
    select
        run_id, day, agent, model, input_tokens, output_tokens, agent_runtime_ms
    from staging.stg_runs
),

totals as (
    select * from intermediate.int_run_llm_totals
),

roots as (
    select * from intermediate.int_run_root_spans
)

select
    lines.run_id,
    lines.day,
    lines.agent,
    coalesce(lines.model, totals.model, 'unknown') as model,
    coalesce(lines.input_tokens, totals.input_tokens) as input_tokens,
    coalesce(lines.output_tokens, totals.output_tokens) as output_tokens,
    coalesce(lines.agent_runtime_ms, roots.duration_ms) as agent_runtime_ms,
    case
        when lines.input_tokens is not null or lines.output_tokens is not null then 'metadata'
        when totals.input_tokens is not null or totals.output_tokens is not null then 'spans'
        else 'none'
    end as tokens_source,
    case
        when lines.agent_runtime_ms is not null then 'metadata'
        when roots.duration_ms is not null then 'spans'
        else 'none'
    end as runtime_source,
    coalesce(totals.n_llm_calls, 0) as n_llm_calls,
    totals.price as llm_price
from lines
left join totals on lines.run_id = totals.run_id
left join roots on lines.run_id = roots.run_id
