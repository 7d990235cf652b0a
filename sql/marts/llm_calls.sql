-- materialized: view
-- stored: llm_calls
-- partition: week
-- Purpose: the llm_calls table, each row with its run: the span's run_id attribute, else its
-- trace's, else the one run sharing its trace_id within a day (linked_by says which); agent: its
-- span's, resolved over the whole trace (int_span_agents); model as the source wrote it and
-- canonical_model (canonical_model()); price is the source's, else the call's tokens at the price
-- table's rates for its canonical model, cached input tokens at the cached rate (price_source:
-- source, table, or null when neither prices it), at the period in force on the day of its run
-- when it counts toward that run (the run's line within a day of it), else on its own day, so
-- that a run and its calls are priced alike (price_from: that period's price_from, null unless
-- the table priced the call from a period).
-- Grain: one row per LLM call (a span's log_request).
create or replace view llm_calls as
with rows_ as (
    select * from staging.stg_llm_calls
),

span_runs as (
    select source_file, source_line, span_id, run_id, linked_by, near_run_day
    from intermediate.int_span_runs
),

span_agents as (
    select source_file, source_line, span_id, agent
    from intermediate.int_span_agents
),

linked as (
    select
        rows_.* replace (coalesce(span_agents.agent, rows_.agent) as agent),
        span_runs.run_id as linked_run_id,
        span_runs.linked_by,
        coalesce(span_runs.near_run_day, rows_.day) as price_day
    from rows_
    left join span_runs
        on
            rows_.source_file = span_runs.source_file
            and rows_.source_line = span_runs.source_line
            and rows_.span_id = span_runs.span_id
    left join span_agents
        on
            rows_.source_file = span_agents.source_file
            and rows_.source_line = span_agents.source_line
            and rows_.span_id = span_agents.span_id
),

priced as (
    select
        linked.*,
        coalesce(names.model, linked.model) as canonical_model,
        token_cost(
            linked.input_tokens, linked.cached_input_tokens, linked.output_tokens,
            prices.input_usd_per_mtok, prices.cached_input_usd_per_mtok,
            prices.output_usd_per_mtok
        ) as table_price,
        prices.price_from as table_price_from
    from linked
    left join intermediate.int_model_names as names on linked.model = names.model_raw
    left join model_prices as prices
        on
            names.model = prices.model
            and price_in_force(linked.price_day, prices.price_from, prices.price_to)
)

select
    priced.* exclude (
        linked_run_id, linked_by, price_day, canonical_model, table_price, table_price_from
    ) replace (
        priced.linked_run_id as run_id,
        coalesce(priced.price, priced.table_price) as price
    ),
    priced.linked_by,
    priced.canonical_model,
    case
        when priced.price is not null then 'source'
        when priced.table_price is not null then 'table'
    end as price_source,
    case
        when priced.price is null and priced.table_price is not null
            then priced.table_price_from
    end as price_from
from priced
