-- materialized: view
-- Purpose: findings by code, and the share of runs each code touches; findings with no run (an
-- unlinked span, a file) count under agent and model 'unknown'. n_findings counts distinct
-- findings (a tool call or message that later LLM calls' prompts repeat is one finding per run),
-- n_seen their observations, repeats included.
-- Grain: one row per day, agent, model, code.
create or replace view v_flag_summary as
with runs_ as (
    select run_id, day, agent, model from intermediate.int_run_resolved
),

findings as (
    select
        coalesce(runs_.day, flags.day) as day,
        coalesce(runs_.agent, 'unknown') as agent,
        coalesce(runs_.model, 'unknown') as model,
        flags.code,
        flags.severity,
        flags.category,
        flags.run_id,
        flags.n_seen
    from flags
    left join runs_ on flags.run_id = runs_.run_id
),

group_runs as (
    select day, agent, model, count(*) as n_runs from runs_ group by day, agent, model
),

per_code as (
    select
        day,
        agent,
        model,
        code,
        any_value(severity) as severity,
        any_value(category) as category,
        count(*) as n_findings,
        count(distinct run_id) as n_runs_affected,
        sum(n_seen)::bigint as n_seen
    from findings
    group by day, agent, model, code
)

select
    per_code.* exclude (n_seen),
    per_code.n_runs_affected / group_runs.n_runs as rate_per_run,
    per_code.n_seen
from per_code
left join group_runs
    on per_code.day = group_runs.day
    and per_code.agent = group_runs.agent
    and per_code.model = group_runs.model
