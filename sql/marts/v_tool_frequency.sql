-- materialized: view
-- Purpose: how often each tool is called, by how many runs, with how many bad or unanswered
-- calls and, with a tool registry, how many calls it flagged (unknown tool, schema or strict
-- violations); registered tools never called show with zero calls (is_registered says which
-- tools the registry lists for the agent; null when it does not name the agent). Counts the
-- runs' own transcripts (source = 'response'), not the copies that LLM-call spans log.
-- Grain: one row per day, agent, model, tool_name.
create or replace view v_tool_frequency as
with usage as (
    select * from intermediate.int_tool_usage
),

group_runs as (
    select day, agent, model, count(*) as n_runs
    from intermediate.int_run_resolved
    group by day, agent, model
)

select
    usage.day,
    usage.agent,
    usage.model,
    usage.tool_name,
    usage.n_calls,
    usage.n_runs_using,
    usage.n_calls / group_runs.n_runs as calls_per_run,
    usage.n_calls / nullif(sum(usage.n_calls) over (
        partition by usage.day, usage.agent, usage.model
    ), 0) as call_share,
    usage.n_invalid_arguments,
    usage.n_unanswered,
    usage.n_orphan_results,
    usage.n_unknown_tool_calls,
    usage.n_schema_violations,
    usage.n_strict_violations,
    usage.is_registered
from usage
inner join group_runs
    on usage.day = group_runs.day
    and usage.agent = group_runs.agent
    and usage.model = group_runs.model
