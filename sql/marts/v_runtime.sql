-- materialized: view
-- Purpose: agent runtime statistics (runs with unknown runtime left out) and the latency of
-- the runs' LLM calls.
-- Grain: one row per day, agent, model (the run's).
create or replace view v_runtime as
with runs_ as (
    select run_id, day, agent, model, agent_runtime_ms from intermediate.int_run_resolved
),

latencies as (
    select * from intermediate.int_llm_latency
),

runtimes as (
    select
        day,
        agent,
        model,
        count(*) as n_runs,
        avg(agent_runtime_ms) as agent_runtime_ms_avg,
        quantile_cont(agent_runtime_ms, 0.5) as agent_runtime_ms_p50,
        quantile_cont(agent_runtime_ms, 0.9) as agent_runtime_ms_p90,
        quantile_cont(agent_runtime_ms, 0.95) as agent_runtime_ms_p95,
        quantile_cont(agent_runtime_ms, 0.99) as agent_runtime_ms_p99,
        max(agent_runtime_ms) as agent_runtime_ms_max
    from runs_
    group by day, agent, model
)

select
    runtimes.*,
    latencies.llm_latency_ms_p50,
    latencies.llm_latency_ms_p95
from runtimes
left join latencies
    on runtimes.day = latencies.day
    and runtimes.agent = latencies.agent
    and runtimes.model = latencies.model
