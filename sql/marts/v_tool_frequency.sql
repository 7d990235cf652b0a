-- Purpose: how often each tool is called, by how many runs, with how many bad or unanswered
-- calls; counts the runs' own transcripts (source = 'response'), not the copies that LLM-call
-- spans log of the same calls.
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
    usage.n_calls / sum(usage.n_calls) over (
        partition by usage.day, usage.agent, usage.model
    ) as call_share,
    usage.n_invalid_arguments,
    usage.n_unanswered,
    usage.n_orphan_results
from usage
inner join group_runs
    on usage.day = group_runs.day
    and usage.agent = group_runs.agent
    and usage.model = group_runs.model
