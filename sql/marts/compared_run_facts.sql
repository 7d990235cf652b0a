-- materialized: macro
-- Purpose: the facts of each run that the comparisons read (regressions and
-- compare_selection): its total tokens, and whether it was truncated (a finding of category
-- truncation) or broke the response contract (v_contract_violations).
-- Grain: one row per run.
create or replace macro compared_run_facts() as table
with truncated as (
    select distinct run_id from flags where category = 'truncation' and run_id is not null
),

violating as (
    select distinct run_id from v_contract_violations
)

select
    runs.run_id,
    runs.agent,
    runs.model,
    runs.test_case_id,
    runs.status,
    runs.day,
    runs.started_at,
    runs.input_tokens + runs.output_tokens as total_tokens,
    runs.agent_runtime_ms,
    runs.cost_usd,
    truncated.run_id is not null as is_truncated,
    violating.run_id is not null as is_violating
from runs
left join truncated on runs.run_id = truncated.run_id
left join violating on runs.run_id = violating.run_id
