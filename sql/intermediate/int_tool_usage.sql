-- materialized: table
-- stored: _derived/int_tool_usage
-- partition: week
-- Purpose: tool calls of the runs' own transcripts (source = 'response', not the copies that
-- LLM-call spans log of the same calls) counted by the run's keys: calls, runs using the tool,
-- bad or unanswered calls, tool results that answer no call, and the tool registry's findings;
-- with a zero row for each registered tool of the agent that the group never called.
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

findings as (
    select
        runs_.day,
        runs_.agent,
        runs_.model,
        flags.tool_name,
        count(*) filter (where flags.code = 'tool_result_orphan') as n_orphan_results,
        count(*) filter (where flags.code = 'tool_unknown') as n_unknown_tool_calls,
        count(*) filter (where flags.code = 'tool_arguments_schema_violation')
            as n_schema_violations,
        count(*) filter (where flags.code = 'tool_arguments_strict_violation')
            as n_strict_violations
    from staging.stg_flags as flags
    inner join runs_ on flags.run_id = runs_.run_id
    where
        flags.span_id is null
        and flags.code in ('tool_result_orphan', 'tool_unknown',
                           'tool_arguments_schema_violation', 'tool_arguments_strict_violation')
    group by runs_.day, runs_.agent, runs_.model, flags.tool_name
),

registry as (
    select distinct agent, tool_name from staging.stg_tool_registry
),

groups as (
    select distinct day, agent, model from runs_
),

registered as (
    select distinct groups.day, groups.agent, groups.model, registry.tool_name
    from groups
    inner join registry on groups.agent = registry.agent or registry.agent = '*'
),

covered_agents as (
    select distinct groups.agent
    from groups
    inner join registry on groups.agent = registry.agent or registry.agent = '*'
),

keys as (
    select day, agent, model, tool_name from per_tool
    union
    select day, agent, model, tool_name from registered
)

select
    keys.day,
    keys.agent,
    keys.model,
    keys.tool_name,
    coalesce(per_tool.n_calls, 0) as n_calls,
    coalesce(per_tool.n_runs_using, 0) as n_runs_using,
    coalesce(per_tool.n_invalid_arguments, 0) as n_invalid_arguments,
    coalesce(per_tool.n_unanswered, 0) as n_unanswered,
    coalesce(findings.n_orphan_results, 0) as n_orphan_results,
    coalesce(findings.n_unknown_tool_calls, 0) as n_unknown_tool_calls,
    coalesce(findings.n_schema_violations, 0) as n_schema_violations,
    coalesce(findings.n_strict_violations, 0) as n_strict_violations,
    case
        when registered.tool_name is not null then true
        when covered_agents.agent is not null then false
    end as is_registered
from keys
left join per_tool
    on keys.day = per_tool.day
    and keys.agent = per_tool.agent
    and keys.model = per_tool.model
    and keys.tool_name = per_tool.tool_name
left join findings
    on keys.day = findings.day
    and keys.agent = findings.agent
    and keys.model = findings.model
    and keys.tool_name is not distinct from findings.tool_name
left join registered
    on keys.day = registered.day
    and keys.agent = registered.agent
    and keys.model = registered.model
    and keys.tool_name = registered.tool_name
left join covered_agents on keys.agent = covered_agents.agent
