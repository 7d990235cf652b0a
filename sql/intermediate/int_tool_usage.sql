-- Purpose: tool calls of the runs' own transcripts (source = 'response', not the copies that
-- LLM-call spans log of the same calls) counted by the run's keys: calls, runs using the tool,
-- bad or unanswered calls, and tool results that answer no call.
-- Grain: one row per day, agent, model (the run's), tool_name.
create or replace view intermediate.int_tool_usage as
with runs_ as (
    select run_id, day, agent, model from intermediate.int_run_resolved
),

calls as (
    select
        runs_.day,
        runs_.agent,
        runs_.model,
        tool_calls.run_id,
        tool_calls.tool_name,
        tool_calls.arguments_valid,
        tool_calls.result_message_index
    from staging.stg_tool_calls as tool_calls
    inner join runs_ on tool_calls.run_id = runs_.run_id
    where tool_calls.source = 'response'
),

per_tool as (
    select
        day,
        agent,
        model,
        tool_name,
        count(*) as n_calls,
        count(distinct run_id) as n_runs_using,
        count(*) filter (where not arguments_valid) as n_invalid_arguments,
        count(*) filter (where result_message_index is null) as n_unanswered
    from calls
    group by day, agent, model, tool_name
),

orphans as (
    select
        runs_.day,
        runs_.agent,
        runs_.model,
        flags.tool_name,
        count(*) as n_orphan_results
    from staging.stg_flags as flags
    inner join runs_ on flags.run_id = runs_.run_id
    where flags.code = 'tool_result_orphan' and flags.span_id is null
    group by runs_.day, runs_.agent, runs_.model, flags.tool_name
)

select
    per_tool.*,
    coalesce(orphans.n_orphan_results, 0) as n_orphan_results
from per_tool
left join orphans
    on per_tool.day = orphans.day
    and per_tool.agent = orphans.agent
    and per_tool.model = orphans.model
    and per_tool.tool_name = orphans.tool_name
