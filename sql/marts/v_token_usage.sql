-- materialized: view
-- Purpose: token usage and LLM spend; a run's tokens are input + output (null when neither is
-- known, and then left out of the average and percentiles); price sums the runs' LLM calls
-- (each the source's price, else the price table's); cost_usd_total sums the runs' cost_usd
-- (also runs with token totals and no LLM calls, at the price table's rates for the model),
-- cost_usd_per_run is its average over the n_runs_costed runs whose cost is known.
-- Grain: one row per day, agent, model.
create or replace view v_token_usage as
with runs_ as (
    select
        day,
        agent,
        model,
        input_tokens,
        output_tokens,
        llm_price,
        cost_usd,
        run_tokens(input_tokens, output_tokens) as run_tokens
    from runs
)

select
    day,
    agent,
    model,
    count(*) as n_runs,
    sum(input_tokens)::bigint as input_tokens,
    sum(output_tokens)::bigint as output_tokens,
    sum(run_tokens)::bigint as total_tokens,
    avg(run_tokens) as tokens_per_run_avg,
    quantile_cont(run_tokens, 0.5) as tokens_per_run_p50,
    quantile_cont(run_tokens, 0.95) as tokens_per_run_p95,
    sum(llm_price) as price,
    sum(cost_usd) as cost_usd_total,
    avg(cost_usd) as cost_usd_per_run,
    count(cost_usd) as n_runs_costed
from runs_
group by day, agent, model
