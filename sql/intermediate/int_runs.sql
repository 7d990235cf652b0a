-- materialized: table
-- stored: _derived/int_runs
-- partition: week
-- Purpose: every run as the warehouse serves it, stored once per commit so that reading whole
-- runs is one scan: the line's own fields (a run made from a trace: error when its root span
-- failed, else failed when any of its evaluations' verdicts is fail (of the evaluations
-- deciding_evaluations names, when it names some), with the first such by name evaluation as
-- outcome_explanation, passed when one is pass and none fail, else ungraded), with the model,
-- token totals and runtime taken from the run's spans where the line has none (the model
-- canonical, the exact names beside it, the run's cost in USD, where its price came from and
-- the price period used), and how many findings the run has (its own, its spans', and those
-- derived across tables; a finding that LLM calls' prompts repeat counts once), how many of
-- them errors.
-- Grain: one row per run (or turn of a multi-turn session).
create or replace view intermediate.int_runs as
with lines as (
    select * from staging.stg_runs
    union all by name
    select * exclude (root_failed, root_span_id) from intermediate.int_trace_runs
),

-- A run made from a trace: error when its root span failed, else its evaluations decide.
trace_roots as (
    select run_id, day, root_failed from intermediate.int_trace_runs
),

verdicts as (
    select
        run_id,
        run_day,
        count(*) filter (where verdict = 'pass') as n_pass,
        count(*) filter (where verdict = 'fail') as n_fail,
        min(printf('%s: %s', name, coalesce(explanation, label)))
            filter (where verdict = 'fail') as failed_because
    from intermediate.int_scores
    where run_day is not null
      -- The evaluations a setting names decide (deciding_evaluations), else every one.
      and (
          not exists (select 1 from deciding_evaluations)
          or name in (select name from deciding_evaluations)
      )
    group by run_id, run_day
),

trace_outcomes as (
    select
        trace_roots.run_id,
        trace_roots.day,
        case
            when trace_roots.root_failed then 'error'
            when verdicts.n_fail > 0 then 'failed'
            when verdicts.n_pass > 0 then 'passed'
            else 'ungraded'
        end as status,
        case when not trace_roots.root_failed then verdicts.failed_because end as explanation
    from trace_roots
    left join verdicts
        on trace_roots.run_id = verdicts.run_id and trace_roots.day = verdicts.run_day
),

resolved as (
    select * from intermediate.int_run_resolved
),

findings as (
    select run_id, run_day, severity from intermediate.int_flags
),

flag_counts as (
    select
        run_id,
        count(*) as n_flags,
        count(*) filter (where severity = 'error') as n_error_flags
    from findings
    where run_day is not null
    group by run_id
)

select
    lines.* replace (
        resolved.model as model,
        resolved.input_tokens as input_tokens,
        resolved.output_tokens as output_tokens,
        resolved.agent_runtime_ms as agent_runtime_ms,
        resolved.tokens_source as tokens_source,
        case
            when lines.record_shape = 'trace' then trace_outcomes.status else lines.status
        end as status,
        case
            when lines.record_shape = 'trace' then trace_outcomes.explanation
            else lines.outcome_explanation
        end as outcome_explanation
    ),
    resolved.runtime_source,
    resolved.n_llm_calls,
    resolved.llm_price,
    resolved.model_raw,
    resolved.response_model,
    resolved.cost_usd,
    resolved.price_source,
    resolved.price_from,
    coalesce(flag_counts.n_flags, 0) as n_flags,
    coalesce(flag_counts.n_error_flags, 0) as n_error_flags
from lines
-- By run and day: two runs of one id on days further apart than a day (a trace whose agent spans
-- a clock put days apart) stay two rows.
inner join resolved on lines.run_id = resolved.run_id and lines.day = resolved.day
left join flag_counts on lines.run_id = flag_counts.run_id
left join trace_outcomes
    on lines.run_id = trace_outcomes.run_id and lines.day = trace_outcomes.day
