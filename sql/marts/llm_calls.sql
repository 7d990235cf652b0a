-- Purpose: the llm_calls table, each row with its run: the span's run_id attribute, else the one
-- run sharing its trace_id within a day (linked_by says which); model as the source wrote it and
-- canonical_model (canonical_model()); price is the source's, else the call's tokens at the price
-- table's rates for its canonical model, cached input tokens at the cached rate (price_source:
-- source, table, or null when neither prices it).
-- Grain: one row per LLM call (a span's log_request).
create or replace view llm_calls as
with rows_ as (
    select * from staging.stg_llm_calls
),

span_runs as (
    select span_id, run_id, linked_by from intermediate.int_span_runs
),

priced as (
    select
        rows_.*,
        coalesce(names.model, rows_.model) as canonical_model,
        token_cost(
            rows_.input_tokens, rows_.cached_input_tokens, rows_.output_tokens,
            prices.input_usd_per_mtok, prices.cached_input_usd_per_mtok,
            prices.output_usd_per_mtok
        ) as table_price
    from rows_
    left join intermediate.int_model_names as names on rows_.model = names.model_raw
    left join model_prices as prices on names.model = prices.model
)

select
    priced.* exclude (canonical_model, table_price) replace (
        span_runs.run_id as run_id,
        coalesce(priced.price, priced.table_price) as price
    ),
    span_runs.linked_by,
    priced.canonical_model,
    case
        when priced.price is not null then 'source'
        when priced.table_price is not null then 'table'
    end as price_source
from priced
left join span_runs on priced.span_id = span_runs.span_id
