-- materialized: table
-- stored: _derived/int_run_llm_totals
-- partition: week
-- Purpose: what a run's LLM calls add up to: calls, tokens, price and their model (the calls of
-- its spans within a day of it, int_span_runs.near_run_day). A call's
-- price is its source's (log_request.price), else its tokens at the price table's rates for
-- its canonical model in force on the run's day (token_cost, price_in_force); model is the
-- most frequent canonical model of the calls, response_model the most frequent exact name
-- among the calls of that model.
-- price_source: source when every priced call carried its own price, else table; price_from:
-- the latest price_from of the periods that priced calls from the table (null when none did,
-- or their models have a single price); n_unpriced counts calls with tokens that neither the
-- source nor the table prices.
-- price is rounded to 1e-12 USD: a sum of doubles depends on the order its rows arrive in, which
-- differs between a serial ingest and partitions ingested at once; rounded, the same calls always
-- give the same cost.
-- Grain: one row per run with at least one linked LLM call.
create or replace view intermediate.int_run_llm_totals as
with calls as (
    select
        span_runs.run_id,
        llm_calls.model as model_raw,
        coalesce(names.model, llm_calls.model) as model,
        llm_calls.input_tokens,
        llm_calls.output_tokens,
        coalesce(
            llm_calls.price,
            token_cost(
                llm_calls.input_tokens, llm_calls.cached_input_tokens, llm_calls.output_tokens,
                prices.input_usd_per_mtok, prices.cached_input_usd_per_mtok,
                prices.output_usd_per_mtok
            )
        ) as price,
        llm_calls.price is not null as source_priced,
        prices.price_from
    from staging.stg_llm_calls as llm_calls
    inner join intermediate.int_span_runs as span_runs
        on
            llm_calls.source_file = span_runs.source_file
            and llm_calls.source_line = span_runs.source_line
            and llm_calls.span_id = span_runs.span_id
    left join intermediate.int_model_names as names on llm_calls.model = names.model_raw
    left join model_prices as prices
        on
            names.model = prices.model
            and price_in_force(span_runs.near_run_day, prices.price_from, prices.price_to)
    where span_runs.near_run_day is not null
),

modes as (
    select run_id, mode(model) as model
    from calls
    group by run_id
),

raw_modes as (
    select calls.run_id, mode(calls.model_raw) as model_raw
    from calls
    inner join modes on calls.run_id = modes.run_id and calls.model = modes.model
    group by calls.run_id
)

select
    calls.run_id,
    count(*) as n_llm_calls,
    sum(calls.input_tokens)::bigint as input_tokens,
    sum(calls.output_tokens)::bigint as output_tokens,
    round(sum(calls.price), 12) as price,
    case
        when count(calls.price) > 0
            then
                case when bool_and(calls.source_priced) filter (where calls.price is not null)
                    then 'source' else 'table' end
    end as price_source,
    max(calls.price_from) filter (
        where not calls.source_priced and calls.price is not null
    ) as price_from,
    count(*) filter (
        where calls.price is null
        and (calls.input_tokens is not null or calls.output_tokens is not null)
    ) as n_unpriced,
    any_value(modes.model) as model,
    any_value(raw_modes.model_raw) as response_model
from calls
left join modes on calls.run_id = modes.run_id
left join raw_modes on calls.run_id = raw_modes.run_id
group by calls.run_id
