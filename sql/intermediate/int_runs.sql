-- Purpose: every run as the warehouse serves it, stored once per commit so that reading whole
-- runs is one scan: the line's own fields, with the model, token totals and runtime taken from
-- the run's spans where the line has none (the model canonical, the exact names beside it, the
-- run's cost in USD and where its price came from), and how many findings the run has (its own, its
-- spans', and those derived across tables), how many of them errors.
-- Grain: one row per run (or turn of a multi-turn session).
create or replace view intermediate.int_runs as
with lines as (
    select * from staging.stg_runs
),

resolved as (
    select * from intermediate.int_run_resolved
),

span_runs as (
    select span_id, run_id from intermediate.int_span_runs
),

findings as (
    select
        coalesce(read_flags.run_id, span_runs.run_id) as run_id,
        read_flags.severity
    from staging.stg_flags as read_flags
    left join span_runs
        on read_flags.run_id is null and read_flags.span_id = span_runs.span_id
    union all
    select run_id, severity from intermediate.int_derived_flags
),

flag_counts as (
    select
        run_id,
        count(*) as n_flags,
        count(*) filter (where severity = 'error') as n_error_flags
    from findings
    where run_id is not null
    group by run_id
)

select
    lines.* replace (
        resolved.model as model,
        resolved.input_tokens as input_tokens,
        resolved.output_tokens as output_tokens,
        resolved.agent_runtime_ms as agent_runtime_ms,
        resolved.tokens_source as tokens_source
    ),
    resolved.runtime_source,
    resolved.n_llm_calls,
    resolved.llm_price,
    resolved.model_raw,
    resolved.response_model,
    resolved.cost_usd,
    resolved.price_source,
    coalesce(flag_counts.n_flags, 0) as n_flags,
    coalesce(flag_counts.n_error_flags, 0) as n_error_flags
from lines
inner join resolved on lines.run_id = resolved.run_id
left join flag_counts on lines.run_id = flag_counts.run_id
