-- materialized: view
-- Purpose: what a tool call costs in tokens: each agent and model's runs of a day, their tool
-- calls (the runs' own transcripts, source = 'response', as v_tool_frequency counts them), their
-- tokens (input + output; a run with neither known adds none), and tokens_per_tool_call: the
-- tokens of the runs whose tokens are known over those runs' tool calls (null without any). An
-- agent whose calls grow dearer shows here before its bill does.
-- Grain: one row per day, agent, model.
create or replace view v_tokens_per_tool_call as
with runs_ as (
    select
        run_id,
        day,
        agent,
        model,
        run_tokens(input_tokens, output_tokens) as run_tokens
    from runs
),

calls as (
    select run_id, count(*) as n_calls
    from tool_calls
    where source = 'response'
    group by run_id
)

select
    runs_.day,
    runs_.agent,
    runs_.model,
    count(*) as n_runs,
    coalesce(sum(calls.n_calls), 0)::bigint as n_tool_calls,
    sum(runs_.run_tokens)::bigint as total_tokens,
    sum(runs_.run_tokens) / nullif(
        sum(calls.n_calls) filter (where runs_.run_tokens is not null), 0
    ) as tokens_per_tool_call
from runs_
left join calls on runs_.run_id = calls.run_id
group by runs_.day, runs_.agent, runs_.model
