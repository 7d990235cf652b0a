-- materialized: macro
-- Purpose: the runs `runlake compare` compares, as compare_groups reads them. `sides` names a
-- relation (a table, a view or a CTE of the calling query) with run_id, is_baseline and
-- is_candidate, one row per chosen run (`runlake compare` makes it from its two predicates).
-- The group is the run's agent when by_agent and its model when by_model (else null). A run
-- counts on its side only when its test case ran on both sides within its group (runs of any
-- status); the runs of a case on one side only, and runs without a test case, take no side
-- (side null): compare_one_sided lists them, and nothing counts them.
-- Grain: one row per chosen run.
create or replace macro compare_selection(sides, by_agent, by_model) as table
with chosen as (
    select
        facts.run_id,
        facts.agent as run_agent,
        facts.model as run_model,
        case when by_agent then facts.agent end as agent,
        case when by_model then facts.model end as model,
        facts.test_case_id,
        facts.status,
        facts.started_at,
        facts.total_tokens,
        facts.agent_runtime_ms,
        facts.cost_usd,
        facts.is_truncated,
        facts.is_violating,
        coalesce(sides_.is_baseline, false) as in_baseline,
        coalesce(sides_.is_candidate, false) as in_candidate
    from compared_run_facts() as facts
    inner join query_table(sides) as sides_ on facts.run_id = sides_.run_id
),

case_sides as (
    select
        agent,
        model,
        test_case_id,
        bool_or(in_baseline) as on_baseline,
        bool_or(in_candidate) as on_candidate
    from chosen
    where test_case_id is not null
    group by agent, model, test_case_id
)

select
    chosen.*,
    case
        when case_sides.on_baseline and case_sides.on_candidate and chosen.in_baseline
            then 'baseline'
        when case_sides.on_baseline and case_sides.on_candidate and chosen.in_candidate
            then 'candidate'
    end as side
from chosen
left join case_sides
    on
        chosen.agent is not distinct from case_sides.agent
        and chosen.model is not distinct from case_sides.model
        and chosen.test_case_id = case_sides.test_case_id
