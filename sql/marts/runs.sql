-- Purpose: every run or turn as the warehouse serves it: the line's own fields, with the model,
-- token totals and runtime taken from the run's spans where the line has none.
-- Grain: one row per run (or turn of a multi-turn session).
create or replace view runs as
with lines as (
    select * from staging.stg_runs
),

resolved as (
    select * from intermediate.int_run_resolved
)

select
    lines.* replace (
        coalesce(resolved.model, lines.model, 'unknown') as model,
        coalesce(resolved.input_tokens, lines.input_tokens) as input_tokens,
        coalesce(resolved.output_tokens, lines.output_tokens) as output_tokens,
        coalesce(resolved.agent_runtime_ms, lines.agent_runtime_ms) as agent_runtime_ms,
        coalesce(resolved.tokens_source, lines.tokens_source) as tokens_source
    ),
    coalesce(
        resolved.runtime_source,
        case when lines.agent_runtime_ms is not null then 'metadata' else 'none' end
    ) as runtime_source,
    coalesce(resolved.n_llm_calls, 0) as n_llm_calls,
    resolved.llm_price
from lines
left join resolved on lines.run_id = resolved.run_id
