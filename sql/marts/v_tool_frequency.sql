-- Purpose: how often each tool is called, by how many runs, with how many bad or unanswered
-- calls; counts the runs' own transcripts (source = 'response'), not the copies that LLM-call
-- spans log of the same calls.
-- Grain: one row per day, agent, model, tool_name.
create or replace view v_tool_frequency as
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

orphans as (
    select
        runs_.day,
        runs_.agent,
        runs_.model,
        flags.tool_name,
        count(*) as n_orphan_results
    from flags
    inner join runs_ on flags.run_id = runs_.run_id
    where flags.code = 'tool_result_orphan'
    group by runs_.day, runs_.agent, runs_.model, flags.tool_name
),

group_runs as (
    select day, agent, model, count(*) as n_runs from runs_ group by day, agent, model
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
)

select
    per_tool.day,
    per_tool.agent,
    per_tool.model,
    per_tool.tool_name,
    per_tool.n_calls,
    per_tool.n_runs_using,
    per_tool.n_calls / group_runs.n_runs as calls_per_run,
    per_tool.n_calls / sum(per_tool.n_calls) over (
        partition by per_tool.day, per_tool.agent, per_tool.model
    ) as call_share,
    per_tool.n_invalid_arguments,
    per_tool.n_unanswered,
    coalesce(orphans.n_orphan_results, 0) as n_orphan_results
from per_tool
inner join group_runs
    on per_tool.day = group_runs.day
    and per_tool.agent = group_runs.agent
    and per_tool.model = group_runs.model
left join orphans
    on per_tool.day = orphans.day
    and per_tool.agent = orphans.agent
    and per_tool.model = orphans.model
    and per_tool.tool_name = orphans.tool_name
