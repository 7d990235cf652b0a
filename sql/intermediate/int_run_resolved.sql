-- materialized: table
-- stored: _derived/int_run_resolved
-- partition: week
-- Purpose: each run's resolved keys and totals: model, tokens and runtime from its line, else
-- from its spans, with where each came from (a run made from a trace: its root span's
-- duration, from spans); narrow, so views that group runs join it cheaply.
-- model is the canonical model (canonical_model() of the line's model, else the most frequent
-- canonical model of its LLM calls); model_raw the exact name it came from; response_model
-- the exact name its LLM calls report. cost_usd: the sum of its LLM calls' prices when every
-- call with tokens is priced (price_source 'source' when all carried their own price, else
-- 'table'), else its token totals at the price table's rates for its model in force on its
-- day ('table'), else null (an unknown model, a day before the model's first price period, or
-- no tokens). price_from: the price_from of the period that priced it from the table (of its
-- calls: the latest), null when it is not priced from a period (source, single price, none).
-- Grain: one row per run.
create or replace view intermediate.int_run_resolved as
with lines as (
    select
        run_id, day, agent, model, input_tokens, output_tokens, agent_runtime_ms, record_shape
    from intermediate.int_run_lines
),

names as (
    select model_raw, model from intermediate.int_model_names
),

totals as (
    select * from intermediate.int_run_llm_totals
),

roots as (
    select * from intermediate.int_run_root_spans
),

resolved as (
    select
        lines.run_id,
        lines.day,
        lines.agent,
        coalesce(names.model, totals.model, 'unknown') as model,
        coalesce(lines.model, totals.response_model) as model_raw,
        totals.response_model,
        coalesce(lines.input_tokens, totals.input_tokens) as input_tokens,
        coalesce(lines.output_tokens, totals.output_tokens) as output_tokens,
        coalesce(lines.agent_runtime_ms, roots.duration_ms) as agent_runtime_ms,
        case
            when lines.input_tokens is not null or lines.output_tokens is not null
                then 'metadata'
            when totals.input_tokens is not null or totals.output_tokens is not null
                then 'spans'
            else 'none'
        end as tokens_source,
        case
            when lines.record_shape = 'trace' and lines.agent_runtime_ms is not null
                then 'spans'
            when lines.agent_runtime_ms is not null then 'metadata'
            when roots.duration_ms is not null then 'spans'
            else 'none'
        end as runtime_source,
        coalesce(totals.n_llm_calls, 0) as n_llm_calls,
        totals.price as llm_price,
        case when totals.n_unpriced = 0 then totals.price end as calls_cost,
        totals.price_source as calls_price_source,
        totals.price_from as calls_price_from
    from lines
    left join names on lines.model = names.model_raw
    left join totals on lines.run_id = totals.run_id
    left join roots on lines.run_id = roots.run_id
),

costed as (
    select
        resolved.*,
        coalesce(
            resolved.calls_cost,
            token_cost(
                resolved.input_tokens, null, resolved.output_tokens,
                prices.input_usd_per_mtok, prices.cached_input_usd_per_mtok,
                prices.output_usd_per_mtok
            )
        ) as cost_usd,
        prices.price_from as table_price_from
    from resolved
    left join model_prices as prices
        on
            resolved.model = prices.model
            and price_in_force(resolved.day, prices.price_from, prices.price_to)
)

select
    run_id,
    day,
    agent,
    model,
    input_tokens,
    output_tokens,
    agent_runtime_ms,
    tokens_source,
    runtime_source,
    n_llm_calls,
    llm_price,
    model_raw,
    response_model,
    cost_usd,
    case
        when calls_cost is not null then calls_price_source
        when cost_usd is not null then 'table'
    end as price_source,
    case
        when calls_cost is not null then calls_price_from
        when cost_usd is not null then table_price_from
    end as price_from
from costed
